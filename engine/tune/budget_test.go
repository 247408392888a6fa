package tune

import (
	"os"
	"sync"
	"testing"
)

// budget is the proof: over 20 seeds, the median number of
// evaluations the optimizer needs to reach within 5% of the optimum (see
// testFunc.tolerance), with 5% noise, is at most a quarter of the median
// random search needs. A search that has not arrived by limit counts as
// limit+1, and the median must not be such a miss.
type budget struct {
	tf      testFunc
	initial int
	limit   int // evaluations the optimizer may take
}

// budgetResult is the medians of a budget run.
type budgetResult struct {
	bo, random []int
}

func (r budgetResult) medians() (bo, random float64) { return median(r.bo), median(r.random) }

// measureBudget runs seeds 1..seeds of both searches, two seeds at a time.
func measureBudget(tb testing.TB, bg budget, seeds int) budgetResult {
	r := budgetResult{bo: make([]int, seeds), random: make([]int, seeds)}
	var wg sync.WaitGroup
	work := make(chan int)
	for range 2 {
		wg.Go(func() {
			for s := range work {
				r.bo[s] = searchBO(tb, bg.tf, uint64(s+1), bg.initial, bg.limit)
				r.random[s] = searchRandom(bg.tf, uint64(s+1), 10_000_000)
			}
		})
	}
	for s := range seeds {
		work <- s
	}
	close(work)
	wg.Wait()
	return r
}

func checkBudget(tb testing.TB, bg budget, r budgetResult) {
	bo, random := r.medians()
	tb.Logf("%s: optimizer %v (median %g), random search %v (median %g)", bg.tf.name, r.bo, bo, r.random, random)
	if bo > float64(bg.limit) {
		tb.Errorf("%s: the optimizer's median is a miss: more than %d evaluations", bg.tf.name, bg.limit)
	}
	if bo > random/4 {
		tb.Errorf("%s: the optimizer's median %g evaluations is more than a quarter of random search's %g", bg.tf.name, bo, random)
	}
}

// TestBudgetBranin is the budget on Branin over 6 seeds (about 10 s);
// BenchmarkBudget runs the 20 seeds.
func TestBudgetBranin(t *testing.T) {
	bg := budget{tf: branin, limit: 80}
	checkBudget(t, bg, measureBudget(t, bg, 6))
}

// TestBudgetHartmann6 is the budget on Hartmann-6 over the 20 seeds. It
// takes one to two minutes on two cores, so it runs only with
// WTD_BUDGET=1.
func TestBudgetHartmann6(t *testing.T) {
	if os.Getenv("WTD_BUDGET") != "1" {
		t.Skip("the budget on Hartmann-6 takes minutes: WTD_BUDGET=1 go test ./engine/tune -run TestBudgetHartmann6 -v")
	}
	bg := budget{tf: hartmann6, limit: 150}
	checkBudget(t, bg, measureBudget(t, bg, 20))
}

// BenchmarkBudget measures the budget on both functions, 20 seeds each
// (Hartmann-6 takes minutes), and reports the medians.
func BenchmarkBudget(b *testing.B) {
	for _, bg := range []budget{{tf: branin, limit: 80}, {tf: hartmann6, limit: 150}} {
		b.Run(bg.tf.name, func(b *testing.B) {
			var r budgetResult
			for b.Loop() {
				r = measureBudget(b, bg, 20)
			}
			checkBudget(b, bg, r)
			bo, random := r.medians()
			b.ReportMetric(bo, "optimizer-evals")
			b.ReportMetric(random, "random-evals")
			b.ReportMetric(random/bo, "x-fewer")
		})
	}
}

package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"wtd/internal/testbench"
)

func TestKeyPickerInRange(t *testing.T) {
	for _, dist := range []string{"", DistUniform, DistZipfian, DistScrambledZipfian, DistLatest, DistHotspot} {
		for _, n := range []int64{1, 2, 3, 10, 1000, 1 << 33} {
			p, err := newKeyPicker(dist, n)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.NewPCG(1, 2)
			for range 20000 {
				if k := p.pick(r); k < 0 || k >= n {
					t.Fatalf("%s over %d: picked %d", dist, n, k)
				}
			}
		}
	}
}

func TestKeyPickerErrors(t *testing.T) {
	if _, err := newKeyPicker("pareto", 10); err == nil {
		t.Error("distribution pareto accepted")
	}
	if _, err := newKeyPicker(DistUniform, 0); err == nil {
		t.Error("0 keys accepted")
	}
}

// topShare returns the share of picks that went to the most picked 1% of
// keys.
func topShare(p *keyPicker, n int64, picks int) float64 {
	counts := make([]int, n)
	r := rand.NewPCG(7, 8)
	for range picks {
		counts[p.pick(r)]++
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	top := 0
	for _, c := range counts[:n/100] {
		top += c
	}
	return float64(top) / float64(picks)
}

func TestZipfianIsSkewed(t *testing.T) {
	const n, picks = 10000, 200000
	zipf, _ := newKeyPicker(DistZipfian, n)
	uni, _ := newKeyPicker(DistUniform, n)
	// With theta 0.99 the top 1% (100 of 10,000 keys) draw about
	// H(100)/H(10000) of the picks, ~0.5; uniform picks give them ~0.01.
	if s := topShare(zipf, n, picks); s < 0.4 || s > 0.6 {
		t.Errorf("zipfian: top 1%% of keys got %.3f of the picks, want about 0.5", s)
	}
	if s := topShare(uni, n, picks); s > 0.03 {
		t.Errorf("uniform: top 1%% of keys got %.3f of the picks, want about 0.01", s)
	}
	// The hottest key is rank 0, which scrambles to key 0; rank 1 must not
	// be its neighbour.
	if k := zipf.zipf.scramble(1); k == 1 {
		t.Errorf("rank 1 scrambles to key %d", k)
	}
}

func TestScrambleIsBijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 4, 10, 12, 97, 1000, 4096} {
		z := newZipfian(n, zipfianTheta)
		seen := make([]bool, n)
		for r := range n {
			k := z.scramble(r)
			if k >= n || seen[k] {
				t.Fatalf("n %d: rank %d -> key %d (repeated or out of range)", n, r, k)
			}
			seen[k] = true
		}
	}
	big := newZipfian(1<<40+3, zipfianTheta) // the 128-bit path
	if a, b := big.scramble(1<<40+2), big.scramble(1<<40+1); a >= 1<<40+3 || a == b {
		t.Errorf("scramble over 2^40+3 keys: %d, %d", a, b)
	}
}

func TestZetaTail(t *testing.T) {
	const n = 3 << 20
	var exact float64
	for i := n; i >= 1; i-- {
		exact += math.Pow(float64(i), -zipfianTheta)
	}
	if got := zeta(n, zipfianTheta); math.Abs(got-exact)/exact > 1e-10 {
		t.Errorf("zeta(%d) = %.12f, exact %.12f", n, got, exact)
	}
}

// TestFNVHash64IsYCSBs checks fnvHash64 against the values YCSB's
// Utils.fnvhash64 returns for the same longs.
func TestFNVHash64IsYCSBs(t *testing.T) {
	for _, tc := range []struct{ v, want uint64 }{
		{0, 6284781860667377211},
		{1, 8517097267634966620},
		{2, 1820151046732198393},
		{255, 8064062821143829734},
		{256, 2056600594528442646},
		{12345, 1792800413050876852},
		{10_000_000_000, 1201321332300452516},
		{1<<40 + 3, 3428301190319734127},
	} {
		if got := fnvHash64(tc.v); got != tc.want {
			t.Errorf("fnvHash64(%d) = %d, YCSB's %d", tc.v, got, tc.want)
		}
	}
}

// TestZetaOfYCSBsItemSpace: the zeta YCSB's scrambled zipfian takes as a
// constant is zeta(10^10, 0.99), as zeta computes it.
func TestZetaOfYCSBsItemSpace(t *testing.T) {
	if got := zeta(10_000_000_000, zipfianTheta); math.Abs(got-ycsbScrambledZetan) > 1e-9 {
		t.Errorf("zeta(10^10, 0.99) = %.14f, YCSB's ZETAN %.14f", got, ycsbScrambledZetan)
	}
}

// BenchmarkKeyPick measures one key draw of each distribution over
// 10^5 and 10^7 keys, as time and as the process's CPU time per draw
// (cpu-ns/draw), which a busy machine inflates less.
func BenchmarkKeyPick(b *testing.B) {
	for _, dist := range distributions {
		for _, n := range []int64{100_000, 10_000_000} {
			b.Run(fmt.Sprintf("%s/%d", dist, n), func(b *testing.B) {
				p, err := newKeyPicker(dist, n)
				if err != nil {
					b.Fatal(err)
				}
				r := rand.NewPCG(1, 2)
				var sum int64
				cpu0 := testbench.CPU()
				for b.Loop() {
					sum += p.pick(r)
				}
				b.ReportMetric(float64(testbench.CPU()-cpu0)/float64(b.N), "cpu-ns/draw")
				if sum < 0 {
					b.Fatal("negative keys drawn")
				}
			})
		}
	}
}

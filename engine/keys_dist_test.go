package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// draws is the sample size of the frequency tests.
const draws = 1_000_000

// chiSquare returns Pearson's statistic of counts against a uniform
// expectation, and the bound it stays under with probability ~1-1e-6 (the
// mean plus 5 standard deviations of a chi-square with len-1 degrees of
// freedom).
func chiSquare(counts []int) (stat, bound float64) {
	var total int
	for _, c := range counts {
		total += c
	}
	exp := float64(total) / float64(len(counts))
	for _, c := range counts {
		d := float64(c) - exp
		stat += d * d / exp
	}
	dof := float64(len(counts) - 1)
	return stat, dof + 5*math.Sqrt(2*dof)
}

// within reports whether a share measured on n draws is within 5 standard
// deviations of p.
func within(share, p float64, n int) bool {
	return math.Abs(share-p) <= 5*math.Sqrt(p*(1-p)/float64(n))
}

// drawCounts draws keys from p and counts them by key.
func drawCounts(p *keyPicker, n int, seed uint64) []int {
	counts := make([]int, n)
	r := rand.NewPCG(seed, seed+1)
	for range draws {
		counts[p.pick(r)]++
	}
	return counts
}

func TestUniformFrequencies(t *testing.T) {
	const n = 1000
	p, _ := newKeyPicker(DistUniform, n)
	counts := drawCounts(p, n, 3)
	if stat, bound := chiSquare(counts); stat > bound {
		t.Errorf("uniform over %d keys: chi-square %.0f > %.0f", n, stat, bound)
	}
}

func TestZipfianFrequencies(t *testing.T) {
	const n = 10000
	p, _ := newKeyPicker(DistZipfian, n)
	counts := drawCounts(p, n, 5)
	// Rank r has probability (r+1)^-theta / zeta(n); rank 0 scrambles to
	// key 0, rank 1 to scramble(1).
	zn := zeta(n, zipfianTheta)
	for rank, key := range []uint64{0, p.zipf.scramble(1)} {
		want := math.Pow(float64(rank+1), -zipfianTheta) / zn
		if got := float64(counts[key]) / draws; !within(got, want, draws) {
			t.Errorf("rank %d (key %d): share %.5f, want %.5f", rank, key, got, want)
		}
	}
	// The hottest 1% of keys: zeta(n/100)/zeta(n) by the definition; Gray's
	// closed form, which YCSB uses too, gives the head a little more (2.4%
	// at 10^4 keys), so the tolerance is 4%.
	want := zeta(n/100, zipfianTheta) / zn
	if got := headShare(counts, n/100); math.Abs(got/want-1) > 0.04 {
		t.Errorf("top 1%% of keys: share %.4f, want %.4f within 4%%", got, want)
	}
}

// headShare returns the share of the draws that went to the k most drawn
// keys; it sorts counts.
func headShare(counts []int, k int) float64 {
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	top, total := 0, 0
	for i, c := range counts {
		if i < k {
			top += c
		}
		total += c
	}
	return float64(top) / float64(total)
}

func TestHotspotFrequencies(t *testing.T) {
	const n = 1000
	for _, tc := range []struct{ fraction, ops float64 }{{0, 0}, {0.1, 0.9}, {0.5, 0.5}} {
		p, err := newKeyPickerWith(keyOptions{dist: DistHotspot, items: n, hotFraction: tc.fraction, hotOps: tc.ops})
		if err != nil {
			t.Fatal(err)
		}
		fraction, ops := tc.fraction, tc.ops
		if fraction == 0 {
			fraction, ops = DefaultHotFraction, DefaultHotOps
		}
		hot := int(fraction * n)
		counts := drawCounts(p, n, 7)
		inHot := 0
		for _, c := range counts[:hot] {
			inHot += c
		}
		if got := float64(inHot) / draws; !within(got, ops, draws) {
			t.Errorf("hot fraction %v: the hot set got %.4f of the draws, want %v", fraction, got, ops)
		}
		// Within each set the keys are uniform.
		for name, set := range map[string][]int{"hot": counts[:hot], "cold": counts[hot:]} {
			if stat, bound := chiSquare(set); stat > bound {
				t.Errorf("hot fraction %v: %s set chi-square %.0f > %.0f", fraction, name, stat, bound)
			}
		}
	}
	for _, bad := range []struct{ fraction, ops float64 }{{1.5, 0.5}, {0.2, -1}, {-0.1, 0.5}} {
		if _, err := newKeyPickerWith(keyOptions{dist: DistHotspot, items: n, hotFraction: bad.fraction, hotOps: bad.ops}); err == nil {
			t.Errorf("hot_fraction %v hot_ops %v accepted", bad.fraction, bad.ops)
		}
	}
}

// TestHotspotSetIsYCSBs: the hot set is the first fraction*keys keys
// rounded down, as YCSB's HotspotIntegerGenerator has it (at least one):
// each of them gets hot_ops/hot of the draws, each other key
// (1-hot_ops)/(keys-hot).
func TestHotspotSetIsYCSBs(t *testing.T) {
	const n = 200_000
	for _, tc := range []struct {
		keys     int64
		fraction float64
		hot      int
	}{
		{10, 0.25, 2}, // 2.5 keys
		{7, 0.5, 3},   // 3.5 keys
		{1000, 0.2, 200},
		{50, 0.01, 1}, // half a key
		{9, 0.99, 8},  // 8.91 keys
	} {
		p, err := newKeyPickerWith(keyOptions{dist: DistHotspot, items: tc.keys, hotFraction: tc.fraction, hotOps: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, tc.keys)
		r := rand.NewPCG(13, 14)
		for range n {
			counts[p.pick(r)]++
		}
		for k, c := range counts {
			want := 0.9 / float64(tc.hot)
			if k >= tc.hot {
				want = 0.1 / float64(int(tc.keys)-tc.hot)
			}
			if got := float64(c) / n; !within(got, want, n) {
				t.Errorf("%d keys, hot fraction %v: key %d got %.4f of the draws, want %.4f (a hot set of %d keys)",
					tc.keys, tc.fraction, k, got, want, tc.hot)
			}
		}
	}
}

// TestLatestFollowsInserts: the newest key is drawn most, the newest 1% of
// the keys get zeta(n/100)/zeta(n) of the draws, and acknowledging inserts
// moves all of it up, growing the key count; an insert acknowledged out of
// order waits for the ones below it.
func TestLatestFollowsInserts(t *testing.T) {
	const n = 10000
	p, err := newKeyPickerWith(keyOptions{dist: DistLatest, items: n, newest: n - 1, grow: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.NewPCG(9, 10)
	check := func(newest int64, items int) {
		t.Helper()
		counts := make([]int, items)
		for range draws {
			k := p.pick(r)
			back := newest - k
			if back < 0 || back >= int64(items) {
				t.Fatalf("drew %d, outside the %d keys up to %d", k, items, newest)
			}
			counts[back]++
		}
		zn := zeta(uint64(items), zipfianTheta)
		if got, want := float64(counts[0])/draws, 1/zn; !within(got, want, draws) {
			t.Errorf("newest key %d: share %.5f, want %.5f", newest, got, want)
		}
		want := zeta(uint64(items/100), zipfianTheta) / zn
		if got := headShare(counts, items/100); math.Abs(got/want-1) > 0.04 {
			t.Errorf("newest 1%% of keys: share %.4f, want %.4f within 4%%", got, want)
		}
	}
	check(n-1, n)

	p.latest.ack(n + 1) // out of order: n is still in flight
	if newest, items := p.latest.current(); newest != n-1 || items != n {
		t.Fatalf("after acknowledging %d before %d: newest %d, %d keys", n+1, n, newest, items)
	}
	for id := int64(n); id < n+5000; id++ {
		if id != n+1 {
			p.latest.ack(id)
		}
	}
	if newest, items := p.latest.current(); newest != n+4999 || items != n+5000 {
		t.Fatalf("after 5000 inserts: newest %d, %d keys", newest, items)
	}
	check(n+4999, n+5000)
}

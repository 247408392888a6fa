package workload

import (
	"cmp"
	"fmt"
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

// grayCDF returns P(rank < k) for ranks drawn by Gray's closed form (as
// zipfian.rank and YCSB's ZipfianGenerator draw them) over n items whose
// zeta is zetan: rank 0 when u*zetan < 1, rank 1 below 1 + 2^-theta, else
// floor(n*(eta*u-eta+1)^(1/(1-theta))), so rank < k for k >= 2 while
// u < 1 - (1-(k/n)^(1-theta))/eta.
func grayCDF(n, zetan float64, k uint64) float64 {
	const theta = zipfianTheta
	zeta2 := 1 + math.Pow(2, -theta)
	switch {
	case k == 0:
		return 0
	case k == 1:
		return 1 / zetan
	case float64(k) >= n:
		return 1
	}
	eta := (1 - math.Pow(2/n, 1-theta)) / (1 - zeta2/zetan)
	return max(zeta2/zetan, 1-(1-math.Pow(float64(k)/n, 1-theta))/eta)
}

// scrambledHeadRanks is how many of the scrambled zipfian's ranks
// expectedShares follows to their keys; the rest (45% of the draws) it
// spreads evenly.
const scrambledHeadRanks = 1 << 20

// expectedShares returns each key's probability under dist (zipfian or
// scrambled_zipfian) over keys keys, computed from the ranks' shares and
// where the ranks go, and a bound on the variance of each figure's error
// (0 where exact). The scrambled zipfian's head ranks are followed through
// fnvHash64; its tail, ranks of at most pTail each and tail in all, is
// spread evenly, which a hash does up to a variance of at most
// pTail*tail/keys per key.
func expectedShares(t *testing.T, p *keyPicker, dist string, keys uint64) ([]float64, float64) {
	t.Helper()
	shares := make([]float64, keys)
	switch dist {
	case DistZipfian:
		n, zn := float64(keys), zeta(keys, zipfianTheta)
		below := 0.0 // P(rank < r)
		for r := range keys {
			next := grayCDF(n, zn, r+1)
			shares[p.zipf.scramble(r)] = next - below
			below = next
		}
		return shares, 0
	case DistScrambledZipfian:
		n, zn := 10_000_000_001.0, 26.46902820178302 // YCSB's ITEM_COUNT+1 and ZETAN
		below := 0.0
		for r := range uint64(scrambledHeadRanks) {
			next := grayCDF(n, zn, r+1)
			shares[fnvHash64(r)%keys] += next - below
			below = next
		}
		tail := 1 - below
		pTail := grayCDF(n, zn, scrambledHeadRanks+1) - grayCDF(n, zn, scrambledHeadRanks)
		for k := range shares {
			shares[k] += tail / float64(keys)
		}
		return shares, pTail * tail / float64(keys)
	}
	t.Fatalf("no expected shares for %q", dist)
	return nil, 0
}

// TestZipfianShares draws keys from the plain and the scrambled zipfian
// with a fixed seed and checks the share of the hottest key and of the
// hottest 1% of the keys against the shares computed from the zipf
// probabilities of the ranks and where each distribution puts them: within
// 5 binomial standard errors (plus the error bound of the computed share).
// The plain zipfian's hottest key gets 1/zeta(keys), the scrambled one's
// about 1/zeta(10^10) = 3.78% whatever the key count, as YCSB's.
func TestZipfianShares(t *testing.T) {
	const n = 2_000_000
	// ycsbDraws is how many draws the shares measured from YCSB's own
	// ZipfianGenerator(keys) and ScrambledZipfianGenerator(0, keys-1) came
	// from; the computed shares must agree with them too.
	const ycsbDraws = 10_000_000
	for _, tc := range []struct {
		dist          string
		keys          uint64
		hotKey        uint64  // YCSB's most drawn key
		hottest, top1 float64 // YCSB's, measured
	}{
		{DistZipfian, 1000, 0, 0.12933, 0.39844},
		{DistZipfian, 100_000, 0, 0.07805, 0.61261},
		{DistScrambledZipfian, 1000, 211, 0.03881, 0.13129},
		{DistScrambledZipfian, 100_000, 77211, 0.03776, 0.30413},
	} {
		p, err := newKeyPicker(tc.dist, int64(tc.keys))
		if err != nil {
			t.Fatal(err)
		}
		shares, errVar := expectedShares(t, p, tc.dist, tc.keys)
		byShare := make([]uint64, tc.keys)
		for k := range byShare {
			byShare[k] = uint64(k)
		}
		slices.SortStableFunc(byShare, func(a, b uint64) int { return cmp.Compare(shares[b], shares[a]) })
		if byShare[0] != tc.hotKey {
			t.Errorf("%s over %d keys: the hottest key is %d, YCSB's %d", tc.dist, tc.keys, byShare[0], tc.hotKey)
		}

		counts := make([]int, tc.keys)
		r := rand.NewPCG(11, 12)
		for range n {
			k := p.pick(r)
			if k < 0 || uint64(k) >= tc.keys {
				t.Fatalf("%s over %d keys: drew key %d", tc.dist, tc.keys, k)
			}
			counts[k]++
		}
		for _, set := range []struct {
			name string
			keys []uint64
			want float64
		}{
			{fmt.Sprintf("hottest key %d", byShare[0]), byShare[:1], tc.hottest},
			{"hottest 1% of the keys", byShare[:tc.keys/100], tc.top1},
		} {
			var exp float64
			got := 0
			for _, k := range set.keys {
				exp += shares[k]
				got += counts[k]
			}
			share := float64(got) / n
			tol := 5 * math.Sqrt(exp*(1-exp)/n+float64(len(set.keys))*errVar)
			if math.Abs(share-exp) > tol {
				t.Errorf("%s over %d keys, %s: share %.5f, computed %.5f ± %.5f", tc.dist, tc.keys, set.name, share, exp, tol)
			}
			if ycsbTol := 5 * math.Sqrt(exp*(1-exp)/ycsbDraws); math.Abs(exp-set.want) > ycsbTol {
				t.Errorf("%s over %d keys, %s: computed share %.5f, YCSB's %.5f (±%.5f)", tc.dist, tc.keys, set.name, exp, set.want, ycsbTol)
			}
		}
	}
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

// TestLatestFollowsInserts: the newest key gets 1/zeta(n) of the draws and
// the newest 1% of the keys their share by Gray's method, as YCSB's
// SkewedLatestGenerator gives them; acknowledging inserts moves all of it
// up, growing the key count; an insert acknowledged out of order waits for
// the ones below it.
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
		newest1 := 0
		for _, c := range counts[:items/100] {
			newest1 += c
		}
		want := grayCDF(float64(items), zn, uint64(items/100))
		if got := float64(newest1) / draws; !within(got, want, draws) {
			t.Errorf("newest 1%% of keys: share %.4f, want %.4f", got, want)
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

// TestPresetsDrawYCSBsKeys: the presets that YCSB runs with its zipfian
// draw their keys as YCSB does: over 100,000 keys YCSB's hottest key,
// 77211, gets the 3.78% YCSB's own generator gave it over 10^7 draws.
func TestPresetsDrawYCSBsKeys(t *testing.T) {
	const keys, n, ycsbDraws = 100_000, 1_000_000, 10_000_000
	const hotKey, ycsbShare = 77211, 0.03776
	for _, p := range Presets {
		if p.Name == "ycsb-d" {
			continue // latest
		}
		s := Spec{Workload: p.Name, KeySpace: keys, WorkingSetKeys: keys, InsertStartID: keys}
		if err := applyPreset(&s); err != nil {
			t.Fatal(err)
		}
		picker, err := newKeyPickerWith(s.keyOptions())
		if err != nil {
			t.Fatal(err)
		}
		r := rand.NewPCG(15, 16)
		got := 0
		for range n {
			if picker.pick(r) == hotKey {
				got++
			}
		}
		share := float64(got) / n
		tol := 5 * math.Sqrt(ycsbShare*(1-ycsbShare)*(1.0/n+1.0/ycsbDraws))
		if math.Abs(share-ycsbShare) > tol {
			t.Errorf("%s (distribution %s): key %d got %.5f of the draws, YCSB's %.5f ± %.5f", p.Name, s.Distribution, hotKey, share, ycsbShare, tol)
		}
	}
}

package workload

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Key distributions for Spec.Distribution.
const (
	DistUniform = "uniform"
	// DistZipfian is the zipf law itself over the key space: the key of
	// rank r (0 the hottest) gets about 1/(r+1)^0.99 / zeta(keys, 0.99) of
	// the draws (exactly, for ranks 0 and 1), the ranks spread over the
	// keys by a bijection.
	DistZipfian = "zipfian"
	// DistScrambledZipfian is what YCSB's requestdistribution=zipfian
	// draws (its ScrambledZipfianGenerator): a zipfian rank over a fixed
	// space of 10^10 items, hashed onto the keys with FNV-1a, so that many
	// ranks share each key and the head is flatter than DistZipfian's.
	DistScrambledZipfian = "scrambled_zipfian"
	// DistLatest is YCSB's "latest": zipfian over the keys counted back
	// from the newest inserted _id, which moves as the workload inserts.
	DistLatest = "latest"
	// DistHotspot is YCSB's "hotspot": a share of the operations (hot ops)
	// goes uniformly to the first share of the keys (the hot set), the rest
	// uniformly to the others.
	DistHotspot = "hotspot"
)

// distributions lists the key distributions, for errors.
var distributions = []string{DistUniform, DistZipfian, DistScrambledZipfian, DistLatest, DistHotspot}

// checkDistribution returns an error unless dist names a distribution ("" is
// uniform).
func checkDistribution(dist string) error {
	if dist == "" || slices.Contains(distributions, dist) {
		return nil
	}
	return fmt.Errorf("distribution %q is not one of %s", dist, quoteList(distributions))
}

// quoteList words names as "a", "b" or "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// zipfianTheta is YCSB's skew, the only one its scrambled zipfian offers.
const zipfianTheta = 0.99

// keyPicker picks the _id values that reads, updates, scans and queries
// use. It is read-only after construction (the latest distribution's moving
// state is atomic), so one picker serves every thread; each thread brings
// its own PRNG.
type keyPicker struct {
	items  uint64
	zipf   *zipfian          // zipfian
	szipf  *scrambledZipfian // scrambled_zipfian
	hot    *hotspot          // hotspot
	latest *latestKeys       // latest
}

// keyOptions say what a picker draws from.
type keyOptions struct {
	dist  string
	items int64 // [0, items), or for latest the newest items keys
	// hotFraction and hotOps shape hotspot (0: YCSB's 0.2 and 0.8).
	hotFraction, hotOps float64
	// newest is latest's newest _id at the start (items-1 when 0 and
	// items > 0); grow says whether its key count grows with inserts.
	newest int64
	grow   bool
}

// Hotspot defaults, YCSB's.
const (
	DefaultHotFraction = 0.2
	DefaultHotOps      = 0.8
)

// newKeyPicker returns a picker over [0, items) with the named distribution
// ("" means uniform; latest counts back from items-1 and does not grow).
func newKeyPicker(dist string, items int64) (*keyPicker, error) {
	return newKeyPickerWith(keyOptions{dist: dist, items: items, newest: items - 1})
}

// newKeyPickerWith returns a picker for o.
func newKeyPickerWith(o keyOptions) (*keyPicker, error) {
	if o.items < 1 {
		return nil, fmt.Errorf("key space %d out of range [1, %d]", o.items, int64(math.MaxInt64))
	}
	if err := checkDistribution(o.dist); err != nil {
		return nil, err
	}
	p := &keyPicker{items: uint64(o.items)}
	switch o.dist {
	case DistZipfian:
		p.zipf = newZipfian(uint64(o.items), zipfianTheta)
	case DistScrambledZipfian:
		p.szipf = newScrambledZipfian(uint64(o.items))
	case DistHotspot:
		h, err := newHotspot(uint64(o.items), o.hotFraction, o.hotOps)
		if err != nil {
			return nil, err
		}
		p.hot = h
	case DistLatest:
		if o.newest < o.items-1 {
			return nil, fmt.Errorf("latest: newest _id %d below key space %d - 1", o.newest, o.items)
		}
		p.latest = newLatestKeys(o.newest, uint64(o.items), o.grow)
	}
	return p, nil
}

// pick returns the next key using r.
func (p *keyPicker) pick(r *rand.PCG) int64 {
	switch {
	case p.zipf != nil:
		return int64(p.zipf.scramble(p.zipf.rank(unitFloat(r.Uint64()))))
	case p.szipf != nil:
		return int64(p.szipf.pick(unitFloat(r.Uint64())))
	case p.latest != nil:
		return p.latest.pick(r)
	case p.hot != nil:
		return int64(p.hot.pick(r))
	}
	return int64(boundedUint64(r.Uint64(), p.items))
}

// boundedUint64 maps a uniform 64-bit x onto [0, n) by multiplication
// (Lemire); the bias, at most n/2^64, is far below anything measurable.
func boundedUint64(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// unitFloat maps a uniform 64-bit x onto [0, 1).
func unitFloat(x uint64) float64 {
	return float64(x>>11) * (1.0 / (1 << 53))
}

// zipfian draws ranks 0..items-1 with probability proportional to
// 1/(rank+1)^theta, by the closed-form method of Gray et al., "Quickly
// generating billion-record synthetic databases" (SIGMOD 1994), which
// YCSB's ZipfianGenerator also uses: ranks 0 and 1 get their exact share,
// the others the closed form's, which gives the head a little more than
// the law (2.3% more to the top 1% of 10^4 items). Rank 0 is the most
// popular. scramble then spreads the ranks over the key space with a
// bijection, so that the hot keys are not all neighbours in the B-tree
// and each key keeps its rank's share.
type zipfian struct {
	items      uint64
	n          float64
	alpha      float64 // 1 / (1 - theta)
	zetan      float64 // zeta(items, theta)
	eta        float64
	secondEdge float64 // 1 + 0.5^theta: uz below it means rank 1
	mul        uint64  // scramble multiplier, coprime with items
}

func newZipfian(items uint64, theta float64) *zipfian {
	z := zipfianWithZeta(items, theta, zeta(items, theta))
	z.mul = coprimeNear(items, 0.6180339887498949)
	return z
}

// zipfianWithZeta returns the unscrambled zipfian over items whose
// zeta(items, theta) is zetan (so that a growing key set adds terms rather
// than summing them all again).
func zipfianWithZeta(items uint64, theta, zetan float64) *zipfian {
	z := &zipfian{
		items:      items,
		n:          float64(items),
		alpha:      1 / (1 - theta),
		zetan:      zetan,
		secondEdge: 1 + math.Pow(0.5, theta),
	}
	if items >= 3 {
		zeta2 := 1 + math.Pow(2, -theta)
		z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zeta2/z.zetan)
	}
	return z
}

// rank maps a uniform u in [0, 1) to a rank in [0, items).
func (z *zipfian) rank(u float64) uint64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.secondEdge {
		return 1
	}
	r := uint64(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
	if r >= z.items {
		r = z.items - 1
	}
	return r
}

// scramble maps a rank to a key by the bijection r -> r*mul mod items.
func (z *zipfian) scramble(r uint64) uint64 {
	if z.items <= 1<<32 {
		return r * z.mul % z.items
	}
	hi, lo := bits.Mul64(r, z.mul)
	_, rem := bits.Div64(hi, lo, z.items) // hi < items because r, mul < items
	return rem
}

// coprimeNear returns the first m >= frac*n that is coprime with n (1 for
// n <= 2).
func coprimeNear(n uint64, frac float64) uint64 {
	if n <= 2 {
		return 1
	}
	m := uint64(frac * float64(n))
	if m < 1 {
		m = 1
	}
	for ; ; m++ {
		if m >= n {
			m = 1
		}
		if gcd(m, n) == 1 {
			return m
		}
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// YCSB's scrambled zipfian draws its ranks from a ZipfianGenerator over
// items 0..ycsbScrambledItems-1 (its ITEM_COUNT, 10^10, and one more: the
// generator's range is inclusive) whose zeta it does not compute but takes
// as the constant ycsbScrambledZetan, zeta(10^10, 0.99).
const (
	ycsbScrambledItems = 10_000_000_000 + 1
	ycsbScrambledZetan = 26.46902820178302
)

// scrambledZipfian is YCSB's ScrambledZipfianGenerator over keys 0..keys-1:
// a rank from the zipfian over ycsbScrambledItems items, hashed onto the
// keys by fnvHash64 modulo keys. Every key gets the summed shares of the
// ranks that hash to it; rank 0 alone gives its key 1/zeta(10^10) = 3.78%
// of the draws, whatever the key count. Unlike YCSB's core workload, whose
// range is insertstart..insertstart+insertcount inclusive, it never draws
// key number keys, which does not exist.
type scrambledZipfian struct {
	ranks *zipfian
	keys  uint64
}

func newScrambledZipfian(keys uint64) *scrambledZipfian {
	return &scrambledZipfian{ranks: zipfianWithZeta(ycsbScrambledItems, zipfianTheta, ycsbScrambledZetan), keys: keys}
}

// pick maps a uniform u in [0, 1) to a key.
func (s *scrambledZipfian) pick(u float64) uint64 {
	return fnvHash64(s.ranks.rank(u)) % s.keys
}

// FNV-1a's 64-bit constants.
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 1099511628211
)

// fnvHash64 is YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes of v, low
// byte first, then the absolute value of the result read as a signed
// 64-bit integer (2^63 stays 2^63, where Java's Math.abs leaves it
// negative).
func fnvHash64(v uint64) uint64 {
	h := uint64(fnvOffset64)
	for range 8 {
		h ^= v & 0xff
		h *= fnvPrime64
		v >>= 8
	}
	if int64(h) < 0 {
		h = -h
	}
	return h
}

// zetaExactTerms is how many terms zeta sums one by one; beyond them it
// uses the Euler–Maclaurin formula, so a billion keys cost the same as a
// million.
const zetaExactTerms = 1 << 20

// zeta returns the sum over i in [1, n] of 1/i^theta.
func zeta(n uint64, theta float64) float64 {
	m := min(n, zetaExactTerms)
	var sum float64
	for i := m; i >= 1; i-- { // smallest terms first, for accuracy
		sum += math.Pow(float64(i), -theta)
	}
	if n == m {
		return sum
	}
	// Sum over (m, n] ≈ ∫_m^n f + (f(n)-f(m))/2 + (f'(n)-f'(m))/12,
	// with f(x) = x^-theta; the next term is below 1e-20 here.
	fm, fn := float64(m), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	integral := (math.Pow(fn, 1-theta) - math.Pow(fm, 1-theta)) / (1 - theta)
	return sum + integral + (f(fn)-f(fm))/2 + (df(fn)-df(fm))/12
}

package tune

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Knob is one dimension of a search: a setting searched over [Lo, Hi].
// An Integer knob takes whole values only; a Log knob is searched on a log
// scale (Lo must then be above 0, and at least 1 for an integer knob).
type Knob struct {
	Name    string
	Lo, Hi  float64
	Integer bool
	Log     bool
}

// Constraint is an order between two knobs that every proposal keeps:
// Lower < Upper when Strict, else Lower <= Upper.
type Constraint struct {
	Lower, Upper string
	Strict       bool
}

func (c Constraint) String() string {
	if c.Strict {
		return c.Lower + " < " + c.Upper
	}
	return c.Lower + " <= " + c.Upper
}

// Settings are a trial's knob values by knob name.
type Settings map[string]float64

// Space is a checked search space: knobs and the constraints between them.
// It encodes settings into the unit cube [0,1]^d, one coordinate per knob in
// the order given, and decodes points of the cube back into settings
// (integers rounded, log knobs on their log scale).
type Space struct {
	knobs []Knob
	index map[string]int
	cons  []edge
	// order is a topological order of the knobs under the constraints;
	// lo and hi are each knob's bounds narrowed by them (the values it can
	// take in some setting that keeps every constraint).
	order  []int
	lo, hi []float64
}

// edge is a constraint by knob index.
type edge struct {
	lower, upper int
	strict       bool
}

// NewSpace checks the knobs and constraints and returns their space. It
// refuses a bad range, a duplicate or unknown name, a cycle of constraints,
// and constraints that no setting in the ranges can keep, naming the knobs.
func NewSpace(knobs []Knob, constraints []Constraint) (*Space, error) {
	if len(knobs) == 0 {
		return nil, errors.New("tune space: no knobs to search")
	}
	s := &Space{knobs: append([]Knob(nil), knobs...), index: make(map[string]int, len(knobs))}
	for i, k := range knobs {
		if err := checkKnob(k); err != nil {
			return nil, err
		}
		if _, dup := s.index[k.Name]; dup {
			return nil, fmt.Errorf("tune space: knob %s is given twice", k.Name)
		}
		s.index[k.Name] = i
	}
	for _, c := range constraints {
		lo, okLo := s.index[c.Lower]
		up, okUp := s.index[c.Upper]
		switch {
		case !okLo || !okUp:
			return nil, fmt.Errorf("tune space: constraint %s names a knob not searched (knobs: %s)", c, s.names())
		case lo == up:
			return nil, fmt.Errorf("tune space: constraint %s orders a knob against itself", c)
		}
		s.cons = append(s.cons, edge{lo, up, c.Strict})
	}
	if err := s.sortKnobs(); err != nil {
		return nil, err
	}
	if err := s.narrow(); err != nil {
		return nil, err
	}
	return s, nil
}

func checkKnob(k Knob) error {
	where := "tune knob " + k.Name
	switch {
	case k.Name == "":
		return errors.New("tune knob: a knob has no name")
	case math.IsNaN(k.Lo) || math.IsNaN(k.Hi) || math.IsInf(k.Lo, 0) || math.IsInf(k.Hi, 0):
		return fmt.Errorf("%s: range [%s, %s] must be finite", where, num(k.Lo), num(k.Hi))
	case k.Lo >= k.Hi:
		return fmt.Errorf("%s: range [%s, %s] is empty or a single value; lo must be below hi", where, num(k.Lo), num(k.Hi))
	case k.Integer && (k.Lo != math.Trunc(k.Lo) || k.Hi != math.Trunc(k.Hi)):
		return fmt.Errorf("%s: an integer knob needs whole bounds, not [%s, %s]", where, num(k.Lo), num(k.Hi))
	case k.Log && k.Integer && k.Lo < 1:
		return fmt.Errorf("%s: a log-scale integer knob needs lo >= 1, not %s", where, num(k.Lo))
	case k.Log && k.Lo <= 0:
		return fmt.Errorf("%s: a log-scale knob needs lo > 0, not %s", where, num(k.Lo))
	}
	return nil
}

// sortKnobs orders the knobs so that each comes after the knobs it must
// exceed (Kahn's algorithm, ties in the given order), refusing a cycle.
func (s *Space) sortKnobs() error {
	d := len(s.knobs)
	preds := make([]int, d)
	for _, e := range s.cons {
		preds[e.upper]++
	}
	done := make([]bool, d)
	for len(s.order) < d {
		next := -1
		for i := range d {
			if !done[i] && preds[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			var left []string
			for i := range d {
				if !done[i] {
					left = append(left, s.knobs[i].Name)
				}
			}
			return fmt.Errorf("tune space: the constraints form a cycle among %s", strings.Join(left, ", "))
		}
		done[next] = true
		s.order = append(s.order, next)
		for _, e := range s.cons {
			if e.lower == next {
				preds[e.upper]--
			}
		}
	}
	return nil
}

// narrow computes each knob's bounds under the constraints: lows pushed up
// along the order, highs pushed down against it. A knob left with no value
// means the constraints cannot all hold.
func (s *Space) narrow() error {
	d := len(s.knobs)
	s.lo, s.hi = make([]float64, d), make([]float64, d)
	for i, k := range s.knobs {
		s.lo[i], s.hi[i] = k.Lo, k.Hi
	}
	for _, i := range s.order {
		for _, e := range s.cons {
			if e.upper == i {
				s.lo[i] = math.Max(s.lo[i], s.above(e, s.lo[e.lower]))
			}
		}
	}
	for j := d - 1; j >= 0; j-- {
		i := s.order[j]
		for _, e := range s.cons {
			if e.lower == i {
				s.hi[i] = math.Min(s.hi[i], s.below(e, s.hi[e.upper]))
			}
		}
	}
	for _, e := range s.cons {
		if s.above(e, s.lo[e.lower]) > s.hi[e.upper] {
			a, b := s.knobs[e.lower], s.knobs[e.upper]
			var others []string
			if s.lo[e.lower] > a.Lo {
				others = append(others, fmt.Sprintf("%s >= %s", a.Name, num(s.lo[e.lower])))
			}
			if s.hi[e.upper] < b.Hi {
				others = append(others, fmt.Sprintf("%s <= %s", b.Name, num(s.hi[e.upper])))
			}
			note := ""
			if len(others) > 0 {
				note = " (the other constraints need " + strings.Join(others, " and ") + ")"
			}
			return fmt.Errorf("tune space: constraint %s cannot hold with %s in [%s, %s] and %s in [%s, %s]%s",
				edgeString(s, e), a.Name, num(a.Lo), num(a.Hi), b.Name, num(b.Lo), num(b.Hi), note)
		}
	}
	for i, k := range s.knobs {
		if s.lo[i] > s.hi[i] {
			return fmt.Errorf("tune space: the constraints on %s leave no value in [%s, %s]", k.Name, num(k.Lo), num(k.Hi))
		}
	}
	return nil
}

// above is the least value of e's upper knob that keeps e when its lower
// knob is v; below is the greatest value of the lower knob when the upper
// one is v.
func (s *Space) above(e edge, v float64) float64 {
	up := s.knobs[e.upper]
	switch {
	case up.Integer && e.strict:
		return math.Floor(v) + 1
	case up.Integer:
		return math.Ceil(v)
	case e.strict:
		return v + gap(up)
	}
	return v
}

func (s *Space) below(e edge, v float64) float64 {
	lo := s.knobs[e.lower]
	switch {
	case lo.Integer && e.strict:
		return math.Ceil(v) - 1
	case lo.Integer:
		return math.Floor(v)
	case e.strict:
		return v - gap(lo)
	}
	return v
}

// gap is the margin a strict constraint keeps between real knobs: a
// millionth of the knob's range, so that rounding never closes it.
func gap(k Knob) float64 { return (k.Hi - k.Lo) * 1e-6 }

func edgeString(s *Space, e edge) string {
	return Constraint{s.knobs[e.lower].Name, s.knobs[e.upper].Name, e.strict}.String()
}

// Knobs returns the knobs in their order, the order of the cube's
// coordinates.
func (s *Space) Knobs() []Knob { return append([]Knob(nil), s.knobs...) }

// Constraints returns the constraints.
func (s *Space) Constraints() []Constraint {
	out := make([]Constraint, len(s.cons))
	for i, e := range s.cons {
		out[i] = Constraint{s.knobs[e.lower].Name, s.knobs[e.upper].Name, e.strict}
	}
	return out
}

// Dim is the number of knobs.
func (s *Space) Dim() int { return len(s.knobs) }

func (s *Space) names() string {
	names := make([]string, len(s.knobs))
	for i, k := range s.knobs {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// Check says whether settings are a point of the space: every knob given
// and no other, each within its range (whole for an integer knob), and
// every constraint kept.
func (s *Space) Check(set Settings) error {
	for name := range set {
		if _, ok := s.index[name]; !ok {
			return fmt.Errorf("tune settings: %s is not a knob of the search (knobs: %s)", name, s.names())
		}
	}
	v := make([]float64, len(s.knobs))
	for i, k := range s.knobs {
		x, ok := set[k.Name]
		if !ok {
			return fmt.Errorf("tune settings: knob %s has no value", k.Name)
		}
		if err := checkValue(k, x); err != nil {
			return err
		}
		v[i] = x
	}
	return s.checkOrder(v)
}

func checkValue(k Knob, x float64) error {
	switch {
	case math.IsNaN(x) || x < k.Lo || x > k.Hi:
		return fmt.Errorf("tune settings: %s = %s is outside its range [%s, %s]", k.Name, num(x), num(k.Lo), num(k.Hi))
	case k.Integer && x != math.Trunc(x):
		return fmt.Errorf("tune settings: %s = %s must be a whole number", k.Name, num(x))
	}
	return nil
}

// checkOrder checks the constraints on values in knob order.
func (s *Space) checkOrder(v []float64) error {
	for _, e := range s.cons {
		a, b := v[e.lower], v[e.upper]
		if a > b || (e.strict && a >= b) {
			return fmt.Errorf("tune settings: %s does not hold: %s = %s, %s = %s",
				edgeString(s, e), s.knobs[e.lower].Name, num(a), s.knobs[e.upper].Name, num(b))
		}
	}
	return nil
}

// Encode maps settings into the unit cube, each knob by its own range and
// scale. An integer value sits at the middle of its cell of the cube.
func (s *Space) Encode(set Settings) ([]float64, error) {
	if err := s.Check(set); err != nil {
		return nil, err
	}
	u := make([]float64, len(s.knobs))
	for i, k := range s.knobs {
		u[i] = toUnit(k, set[k.Name])
	}
	return u, nil
}

// Decode maps a point of the unit cube (coordinates clamped to [0,1]) to
// settings: each knob by its range and scale, integers rounded. The result
// may break a constraint; Check says so.
func (s *Space) Decode(u []float64) Settings {
	set := make(Settings, len(s.knobs))
	for i, k := range s.knobs {
		set[k.Name] = fromUnit(k, u[i])
	}
	return set
}

// values is Decode into knob order.
func (s *Space) values(u []float64) []float64 {
	v := make([]float64, len(s.knobs))
	for i, k := range s.knobs {
		v[i] = fromUnit(k, u[i])
	}
	return v
}

func (s *Space) settings(v []float64) Settings {
	set := make(Settings, len(v))
	for i, k := range s.knobs {
		set[k.Name] = v[i]
	}
	return set
}

// ordered is settings' values in knob order.
func (s *Space) ordered(set Settings) []float64 {
	v := make([]float64, len(s.knobs))
	for i, k := range s.knobs {
		v[i] = set[k.Name]
	}
	return v
}

func (s *Space) unit(v []float64) []float64 {
	u := make([]float64, len(v))
	for i, k := range s.knobs {
		u[i] = toUnit(k, v[i])
	}
	return u
}

// span is the continuous interval a knob's unit coordinate spans: its range,
// widened by half a step each side for an integer knob so that every whole
// value gets a cell of the same width.
func span(k Knob, lo, hi float64) (float64, float64) {
	if k.Integer {
		return lo - 0.5, hi + 0.5
	}
	return lo, hi
}

func toUnit(k Knob, x float64) float64 {
	a, b := span(k, k.Lo, k.Hi)
	if k.Log {
		return (math.Log(x) - math.Log(a)) / (math.Log(b) - math.Log(a))
	}
	return (x - a) / (b - a)
}

func fromUnit(k Knob, u float64) float64 { return between(k, k.Lo, k.Hi, u) }

// between is the value at fraction u of [lo, hi] on k's scale, rounded and
// kept within [lo, hi].
func between(k Knob, lo, hi, u float64) float64 {
	u = clamp01(u)
	a, b := span(k, lo, hi)
	var x float64
	if k.Log {
		x = math.Exp(math.Log(a) + u*(math.Log(b)-math.Log(a)))
	} else {
		x = a + u*(b-a)
	}
	if k.Integer {
		x = math.Round(x)
	}
	return math.Min(math.Max(x, lo), hi)
}

func clamp01(u float64) float64 {
	if math.IsNaN(u) {
		return 0.5
	}
	return math.Min(math.Max(u, 0), 1)
}

// feasible maps any point of the unit cube onto settings that keep every
// constraint: knobs are taken in constraint order, each at fraction u[i] of
// the interval its range leaves once the knobs below it are set. Knobs under
// no constraint take exactly their decoded value. Space-filling designs and
// random candidates go through it, so they never break a constraint.
func (s *Space) feasible(u []float64) []float64 {
	v := make([]float64, len(s.knobs))
	for _, i := range s.order {
		lo := s.lo[i]
		for _, e := range s.cons {
			if e.upper == i {
				lo = math.Max(lo, s.above(e, v[e.lower]))
			}
		}
		v[i] = between(s.knobs[i], lo, s.hi[i], u[i])
	}
	return v
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

package tune

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// wtKnobs are the eviction and checkpoint knobs of a WiredTiger search,
// with the knob table's constraints among them.
func wtKnobs() ([]Knob, []Constraint) {
	return []Knob{
			{Name: "eviction_target", Lo: 10, Hi: 90, Integer: true},
			{Name: "eviction_trigger", Lo: 50, Hi: 99, Integer: true},
			{Name: "eviction_dirty_target", Lo: 1, Hi: 10, Integer: true},
			{Name: "eviction_dirty_trigger", Lo: 5, Hi: 40, Integer: true},
			{Name: "eviction.threads_min", Lo: 1, Hi: 20, Integer: true},
			{Name: "eviction.threads_max", Lo: 1, Hi: 20, Integer: true},
			{Name: "cacheSizeGB", Lo: 0.25, Hi: 4, Log: true},
			{Name: "checkpoint.wait", Lo: 10, Hi: 600, Integer: true, Log: true},
		}, []Constraint{
			{Lower: "eviction_target", Upper: "eviction_trigger", Strict: true},
			{Lower: "eviction_dirty_target", Upper: "eviction_dirty_trigger", Strict: true},
			{Lower: "eviction.threads_min", Upper: "eviction.threads_max"},
		}
}

func TestNewSpaceRefuses(t *testing.T) {
	k := func(name string, lo, hi float64) Knob { return Knob{Name: name, Lo: lo, Hi: hi, Integer: true} }
	tests := []struct {
		name  string
		knobs []Knob
		cons  []Constraint
		want  []string // words the error must contain
	}{
		{"no knobs", nil, nil, []string{"no knobs"}},
		{"empty range", []Knob{k("eviction_target", 50, 50)}, nil, []string{"eviction_target", "[50, 50]"}},
		{"reversed range", []Knob{k("eviction_target", 80, 10)}, nil, []string{"eviction_target", "[80, 10]"}},
		{"fractional integer bounds", []Knob{{Name: "checkpoint.wait", Lo: 0.5, Hi: 60, Integer: true}}, nil, []string{"checkpoint.wait", "whole"}},
		{"log from zero", []Knob{{Name: "cacheSizeGB", Lo: 0, Hi: 4, Log: true}}, nil, []string{"cacheSizeGB", "lo > 0"}},
		{"infinite", []Knob{{Name: "cacheSizeGB", Lo: 0.25, Hi: math.Inf(1)}}, nil, []string{"cacheSizeGB", "finite"}},
		{"duplicate", []Knob{k("a", 1, 2), k("a", 1, 3)}, nil, []string{"a", "twice"}},
		{"unknown knob", []Knob{k("eviction_target", 10, 50)},
			[]Constraint{{Lower: "eviction_target", Upper: "eviction_trigger", Strict: true}}, []string{"eviction_target < eviction_trigger", "not searched"}},
		{"self", []Knob{k("a", 1, 2)}, []Constraint{{Lower: "a", Upper: "a"}}, []string{"a <= a", "itself"}},
		{"cycle", []Knob{k("a", 1, 9), k("b", 1, 9)}, []Constraint{{Lower: "a", Upper: "b"}, {Lower: "b", Upper: "a", Strict: true}}, []string{"cycle", "a, b"}},
		{"target entirely above trigger", []Knob{k("eviction_target", 85, 95), k("eviction_trigger", 50, 80)},
			[]Constraint{{Lower: "eviction_target", Upper: "eviction_trigger", Strict: true}},
			[]string{"eviction_target < eviction_trigger", "eviction_target in [85, 95]", "eviction_trigger in [50, 80]"}},
		{"strict on a shared single value", []Knob{k("eviction_dirty_target", 5, 20), k("eviction_dirty_trigger", 1, 5)},
			[]Constraint{{Lower: "eviction_dirty_target", Upper: "eviction_dirty_trigger", Strict: true}},
			[]string{"eviction_dirty_target < eviction_dirty_trigger"}},
		{"a chain that cannot hold", []Knob{k("a", 1, 10), k("b", 1, 10), k("c", 1, 2)},
			[]Constraint{{Lower: "a", Upper: "b", Strict: true}, {Lower: "b", Upper: "c", Strict: true}, {Lower: "c", Upper: "a", Strict: false}},
			[]string{"cycle"}},
		{"a chain too short for its strict steps", []Knob{k("a", 1, 10), k("b", 1, 10), k("c", 1, 2)},
			[]Constraint{{Lower: "a", Upper: "b", Strict: true}, {Lower: "b", Upper: "c", Strict: true}},
			[]string{"a < b", "a in [1, 10]", "b in [1, 10]", "need b <= 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSpace(tt.knobs, tt.cons)
			if err == nil {
				t.Fatal("NewSpace accepted the space")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestNewSpaceAcceptsTightConstraints(t *testing.T) {
	// Ranges that meet at one value leave exactly one setting for <=, and
	// the strict chain a < b < c over [1,3] leaves exactly 1, 2, 3.
	s, err := NewSpace([]Knob{{Name: "a", Lo: 1, Hi: 3, Integer: true}, {Name: "b", Lo: 1, Hi: 3, Integer: true}, {Name: "c", Lo: 1, Hi: 3, Integer: true}},
		[]Constraint{{Lower: "a", Upper: "b", Strict: true}, {Lower: "b", Upper: "c", Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		v := s.feasible(randomUnit(3, rng))
		if v[0] != 1 || v[1] != 2 || v[2] != 3 {
			t.Fatalf("feasible gave %v, the only setting is [1 2 3]", v)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	knobs, cons := wtKnobs()
	s, err := NewSpace(knobs, cons)
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{"eviction_target": 10, "eviction_trigger": 99, "eviction_dirty_target": 5, "eviction_dirty_trigger": 20,
		"eviction.threads_min": 4, "eviction.threads_max": 4, "cacheSizeGB": 1, "checkpoint.wait": 60}
	u, err := s.Encode(set)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range u {
		if x < 0 || x > 1 {
			t.Errorf("coordinate %d (%s) = %g is outside [0,1]", i, knobs[i].Name, x)
		}
	}
	// cacheSizeGB = 1 is the log-scale middle of [0.25, 4].
	if got := u[6]; math.Abs(got-0.5) > 1e-12 {
		t.Errorf("cacheSizeGB 1 in [0.25, 4] on a log scale encodes to %g, want 0.5", got)
	}
	// An integer's bounds sit in the middle of their end cells: 10 of 10..90
	// is at 0.5/81.
	if got, want := u[0], 0.5/81; math.Abs(got-want) > 1e-12 {
		t.Errorf("eviction_target 10 of [10, 90] encodes to %g, want %g", got, want)
	}
	back := s.Decode(u)
	for name, v := range set {
		if math.Abs(back[name]-v) > 1e-9*math.Abs(v) {
			t.Errorf("%s: %g decoded back as %g", name, v, back[name])
		}
	}
	// Decoding rounds integers and clamps.
	d := s.Decode([]float64{-1, 2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
	if d["eviction_target"] != 10 || d["eviction_trigger"] != 99 {
		t.Errorf("clamped ends decode to %v, %v; want 10, 99", d["eviction_target"], d["eviction_trigger"])
	}
	for _, k := range knobs {
		if k.Integer && d[k.Name] != math.Round(d[k.Name]) {
			t.Errorf("integer knob %s decoded to %g", k.Name, d[k.Name])
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	knobs, cons := wtKnobs()
	s, err := NewSpace(knobs, cons)
	if err != nil {
		t.Fatal(err)
	}
	good := Settings{"eviction_target": 80, "eviction_trigger": 95, "eviction_dirty_target": 5, "eviction_dirty_trigger": 20,
		"eviction.threads_min": 4, "eviction.threads_max": 8, "cacheSizeGB": 1, "checkpoint.wait": 60}
	tests := []struct {
		name   string
		change Settings
		drop   string
		want   string
	}{
		{"out of range", Settings{"cacheSizeGB": 8}, "", "cacheSizeGB = 8 is outside its range [0.25, 4]"},
		{"fraction", Settings{"eviction.threads_max": 4.5}, "", "eviction.threads_max = 4.5 must be a whole number"},
		{"strict equal", Settings{"eviction_dirty_target": 10, "eviction_dirty_trigger": 10}, "", "eviction_dirty_target < eviction_dirty_trigger does not hold"},
		{"order", Settings{"eviction.threads_min": 9}, "", "eviction.threads_min <= eviction.threads_max does not hold"},
		{"unknown", Settings{"syncdelay": 60}, "", "syncdelay is not a knob"},
		{"missing", nil, "checkpoint.wait", "checkpoint.wait has no value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := Settings{}
			for k, v := range good {
				set[k] = v
			}
			for k, v := range tt.change {
				set[k] = v
			}
			delete(set, tt.drop)
			if _, err := s.Encode(set); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Encode error = %v, want one saying %q", err, tt.want)
			}
		})
	}
	if _, err := s.Encode(good); err != nil {
		t.Errorf("Encode refused good settings: %v", err)
	}
}

// TestFeasibleKeepsConstraints maps many random points of the cube and
// checks every one against the constraints, and that the map reaches
// both ends of each knob's range.
func TestFeasibleKeepsConstraints(t *testing.T) {
	knobs, cons := wtKnobs()
	// A real-valued strict pair too, with overlapping ranges.
	knobs = append(knobs, Knob{Name: "x", Lo: 0, Hi: 1}, Knob{Name: "y", Lo: 0.5, Hi: 2})
	cons = append(cons, Constraint{Lower: "x", Upper: "y", Strict: true})
	s, err := NewSpace(knobs, cons)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	lo, hi := make([]float64, len(knobs)), make([]float64, len(knobs))
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	for range 20000 {
		v := s.feasible(randomUnit(len(knobs), rng))
		if err := s.Check(s.settings(v)); err != nil {
			t.Fatalf("feasible gave settings that break the space: %v", err)
		}
		for i, x := range v {
			lo[i], hi[i] = math.Min(lo[i], x), math.Max(hi[i], x)
		}
	}
	for i, k := range knobs {
		if lo[i] != k.Lo && !(k.Log && !k.Integer && lo[i] < k.Lo*1.01) && !(!k.Integer && lo[i] < k.Lo+0.01*(k.Hi-k.Lo)) {
			t.Errorf("%s: lowest value drawn %g, range starts at %g", k.Name, lo[i], k.Lo)
		}
		if hi[i] != k.Hi && !(!k.Integer && hi[i] > k.Hi-0.01*(k.Hi-k.Lo)) {
			t.Errorf("%s: highest value drawn %g, range ends at %g", k.Name, hi[i], k.Hi)
		}
	}
}

package store

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sample is one (ids, vals) pair as the codec sees it.
type codecSample struct {
	ids  []int64
	vals []float64
}

// specialValues are the values most likely to break a codec.
var specialValues = []float64{
	0, math.Copysign(0, -1), 1, -1, math.NaN(), math.Float64frombits(0x7ff8000000000abc),
	math.Inf(1), math.Inf(-1), maxExact, -maxExact, maxExact + 2, -maxExact - 2, math.MaxFloat64,
	math.SmallestNonzeroFloat64, 0.5, 1e-300, 123456789.25, math.MaxInt64, math.MinInt64,
}

// randomStream makes n samples over ids 1..pool in which metrics appear,
// disappear and change, with special values mixed in.
func randomStream(seed uint64, n, pool int) []codecSample {
	rng := rand.New(rand.NewPCG(seed, 7))
	cur := map[int64]float64{}
	var out []codecSample
	randomValue := func() float64 {
		switch rng.IntN(4) {
		case 0:
			return specialValues[rng.IntN(len(specialValues))]
		case 1:
			return float64(rng.Int64N(1<<40) - 1<<39)
		case 2:
			return rng.NormFloat64() * 1e6
		default:
			return float64(rng.IntN(100))
		}
	}
	for range n {
		for id := int64(1); id <= int64(pool); id++ {
			v, ok := cur[id]
			switch r := rng.IntN(100); {
			case !ok && r < 20:
				cur[id] = randomValue()
			case ok && r < 5:
				delete(cur, id)
			case ok && r < 30:
				cur[id] = randomValue()
			case ok && r < 40:
				if isIntegral(v) {
					cur[id] = v + float64(rng.IntN(21)-10)
				}
			}
		}
		s := codecSample{}
		for _, id := range slices.Sorted(maps.Keys(cur)) {
			s.ids, s.vals = append(s.ids, id), append(s.vals, cur[id])
		}
		out = append(out, s)
	}
	return out
}

// encodeAll encodes the stream and returns a copy of every frame.
func encodeAll(stream []codecSample, keyframeEvery int, zip bool) (frames [][]byte, keyframes []bool) {
	var z *deflater
	if zip {
		z = newDeflater()
	}
	enc := newFrameEncoder(keyframeEvery, z)
	for _, s := range stream {
		f, key := enc.encode(s.ids, s.vals)
		frames, keyframes = append(frames, slices.Clone(f)), append(keyframes, key)
	}
	return frames, keyframes
}

func sameSample(t *testing.T, i int, d *frameDecoder, want codecSample) {
	t.Helper()
	if !slices.Equal(d.ids, want.ids) {
		t.Fatalf("sample %d: ids %v, want %v", i, d.ids, want.ids)
	}
	for k := range want.vals {
		if math.Float64bits(d.vals[k]) != math.Float64bits(want.vals[k]) {
			t.Fatalf("sample %d: metric %d = %v (%#x), want %v (%#x)", i, want.ids[k],
				d.vals[k], math.Float64bits(d.vals[k]), want.vals[k], math.Float64bits(want.vals[k]))
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	tests := []struct {
		name          string
		seed          uint64
		samples, pool int
		keyframeEvery int
		zip           bool
	}{
		{"every frame a keyframe", 1, 50, 40, 1, false},
		{"short chains", 2, 200, 60, 3, false},
		{"long chains", 3, 300, 200, 60, false},
		{"long chains deflate", 4, 300, 200, 60, true},
		{"one metric", 5, 100, 1, 10, true},
		{"wide", 6, 40, 3000, 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := randomStream(tt.seed, tt.samples, tt.pool)
			frames, keyframes := encodeAll(stream, tt.keyframeEvery, tt.zip)
			var d frameDecoder
			for i, f := range frames {
				if err := d.decode(f); err != nil {
					t.Fatalf("decode sample %d: %v", i, err)
				}
				sameSample(t, i, &d, stream[i])
			}
			// A reader that starts at any keyframe decodes the rest.
			for start := range frames {
				if !keyframes[start] {
					continue
				}
				if start%tt.keyframeEvery != 0 {
					t.Fatalf("frame %d is a keyframe, want one every %d", start, tt.keyframeEvery)
				}
				var d frameDecoder
				for i := start; i < len(frames) && i < start+2*tt.keyframeEvery; i++ {
					if err := d.decode(frames[i]); err != nil {
						t.Fatalf("decode sample %d from keyframe %d: %v", i, start, err)
					}
					sameSample(t, i, &d, stream[i])
				}
			}
		})
	}
}

func TestCodecEmptyAndUnchanged(t *testing.T) {
	stream := []codecSample{
		{},
		{ids: []int64{3, 9}, vals: []float64{1, 2}},
		{ids: []int64{3, 9}, vals: []float64{1, 2}},
		{},
		{ids: []int64{1 << 40}, vals: []float64{math.NaN()}},
	}
	frames, _ := encodeAll(stream, 100, true)
	if got := len(frames[2]); got != 4 {
		t.Errorf("unchanged sample takes %d bytes, want 4 (flags and three zero counts)", got)
	}
	var d frameDecoder
	for i, f := range frames {
		if err := d.decode(f); err != nil {
			t.Fatalf("decode sample %d: %v", i, err)
		}
		sameSample(t, i, &d, stream[i])
	}
}

func TestCodecRejectsBadFrames(t *testing.T) {
	stream := randomStream(9, 30, 300)
	frames, _ := encodeAll(stream, 10, true)
	plain, _ := encodeAll(stream, 10, false)
	tests := []struct {
		name  string
		prior [][]byte // decoded first
		frame []byte
	}{
		{"empty", nil, nil},
		{"unknown flags", nil, []byte{0x80, 0}},
		{"delta without keyframe", nil, plain[1]},
		{"trailing bytes", nil, append(slices.Clone(plain[0]), 0)},
		{"position out of range", plain[:1], []byte{0, 1, 200, 0, 0}},
		{"bad deflate", nil, []byte{flagKeyframe | flagDeflate, 0xff, 0xff}},
		{"huge count", nil, []byte{flagKeyframe, 0xff, 0xff, 0xff, 0x7f}},
	}
	for n := 1; n < len(plain[3]); n += 7 {
		tests = append(tests, struct {
			name  string
			prior [][]byte
			frame []byte
		}{"truncated plain", plain[:3], plain[3][:n]})
	}
	for n := 1; n < len(frames[0]); n += 5 {
		tests = append(tests, struct {
			name  string
			prior [][]byte
			frame []byte
		}{"truncated deflate", nil, frames[0][:n]})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d frameDecoder
			for i, f := range tt.prior {
				if err := d.decode(f); err != nil {
					t.Fatalf("decode prior frame %d: %v", i, err)
				}
			}
			if err := d.decode(tt.frame); err == nil {
				t.Fatalf("decode %x: no error", tt.frame)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	stream := randomStream(11, 5, 50)
	frames, _ := encodeAll(stream, 3, true)
	for _, fr := range frames {
		f.Add(fr)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var d frameDecoder
		if err := d.decode(frames[0]); err != nil {
			t.Fatal(err)
		}
		_ = d.decode(frame) // must not panic
		if d.ready {
			for i := 1; i < len(d.ids); i++ {
				if d.ids[i] <= d.ids[i-1] {
					t.Fatalf("ids not increasing after decode: %v", d.ids)
				}
			}
		}
	})
}

// realisticStream turns a serverStatus-like stream into codec samples with
// dictionary ids 1..nkeys.
func realisticStream(n, nkeys int) []codecSample {
	g := newServerStatusLike(1, nkeys, 0.1)
	out := make([]codecSample, n)
	for i := range out {
		g.next()
		ids := make([]int64, nkeys)
		for k := range ids {
			ids[k] = int64(k + 1)
		}
		out[i] = codecSample{ids: ids, vals: slices.Clone(g.vals)}
	}
	return out
}

func TestCodecRealisticSize(t *testing.T) {
	stream := realisticStream(600, 800)
	for _, zip := range []bool{false, true} {
		frames, _ := encodeAll(stream, 60, zip)
		total := 0
		for _, f := range frames {
			total += len(f)
		}
		perFrame := float64(total) / float64(len(frames))
		t.Logf("deflate=%v: %.0f bytes per 800-metric sample", zip, perFrame)
		if zip && perFrame > 350 {
			t.Errorf("%.0f bytes per sample, budget 350 (leaving room for the row in SQLite)", perFrame)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	stream := realisticStream(120, 800)
	enc := newFrameEncoder(60, newDeflater())
	total := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := stream[i%len(stream)]
		f, _ := enc.encode(s.ids, s.vals)
		total += len(f)
	}
	b.ReportMetric(float64(total)/float64(b.N), "bytes/sample")
}

func BenchmarkDecode(b *testing.B) {
	stream := realisticStream(120, 800)
	frames, _ := encodeAll(stream, 60, true)
	var d frameDecoder
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := d.decode(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
	}
}

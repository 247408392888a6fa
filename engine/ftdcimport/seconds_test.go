package ftdcimport

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"wtd/engine/record"
)

// TestSecondsOfChangingPeriods feeds samples 1 s apart, then 100 ms apart,
// then 10 s apart: each second with samples gets one value, from the last
// sample of the second before that has one to its own last; the seconds
// without a sample are not measured (NaN), never 0.
func TestSecondsOfChangingPeriods(t *testing.T) {
	var s secondsTracker
	queries := 0.0
	add := func(ts int64, withLatency bool) {
		m := map[string]float64{"opcounters.query": queries, cacheUsed: float64(ts)}
		if withLatency {
			m[readOps], m[readLatency] = queries, queries*250 // 250 µs a read
		}
		s.observe(ts, m)
	}
	t0 := int64(1_700_000_000_000) // a whole second
	ts := t0
	for i := 0; i < 3; i++ { // 1 s apart, 10 queries a second
		add(ts, true)
		ts += 1000
		queries += 10
	}
	// ts = t0+3000: 100 ms apart for two seconds, 1 query a sample.
	for i := 0; i < 20; i++ {
		add(ts, true)
		ts += 100
		queries++
	}
	// ts = t0+5000: 10 s apart, 50 queries each time, no latency.
	ts += 9900
	queries += 49
	for i := 0; i < 2; i++ {
		add(ts, false)
		ts += 10000
		queries += 50
	}
	got := s.result()
	if got == nil || !got.Start.Equal(time.UnixMilli(t0+1000)) {
		t.Fatalf("result %+v, want series starting at the second sample's second", got)
	}
	nan := math.NaN()
	ops := got.Ops.Values
	if len(ops) != 24 {
		t.Fatalf("%d seconds, want 24: %v", len(ops), ops)
	}
	// t0+1, t0+2: 10 a second. t0+3: from t0+2000 to t0+3900 (the last
	// sample of that second): 10+9 queries over 1.9 s. t0+4: from t0+3900
	// to t0+4900, 10 over 1 s. t0+5 to t0+13: no sample. t0+14: t0+4900 to
	// t0+14900, 50 over 10 s. t0+15..t0+23: none. t0+24: 50 over 10 s.
	want := make([]float64, 24)
	for i := range want {
		want[i] = nan
	}
	want[0], want[1], want[2], want[3], want[13], want[23] = 10, 10, 19/1.9, 10, 5, 5
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(ops[i]) || !math.IsNaN(want[i]) && math.Abs(ops[i]-want[i]) > 1e-9 {
			t.Errorf("ops second %d = %v, want %v", i+1, ops[i], want[i])
		}
	}
	// All 149 queries over the 24.9 s from the first sample to the last.
	if v := got.Ops.Step; v == nil || math.Abs(*v-149/24.9) > 1e-9 {
		t.Errorf("ops over the step %v, want %v", v, 149/24.9)
	}
	lat := got.ReadLatency.Values
	for i, v := range lat {
		if i < 4 && v != 250 || i >= 4 && !math.IsNaN(v) {
			t.Errorf("read latency second %d = %v, want 250 µs while it was sampled, then not measured", i+1, v)
		}
	}
	if got.PagesRead != nil || got.WriteLatency != nil {
		t.Errorf("pages read %+v, write latency %+v: not in the samples, want nil", got.PagesRead, got.WriteLatency)
	}
	if c := got.Cache.Values; c[0] != float64(t0+1000) || c[3] != float64(t0+4900) || !math.IsNaN(c[4]) {
		t.Errorf("cache levels %v, want each second's last sample's", c[:5])
	}
	b, err := json.Marshal(got.Ops)
	if err != nil {
		t.Fatal(err)
	}
	var back record.ServerSeries
	if err := json.Unmarshal(b, &back); err != nil || len(back.Values) != 24 || !math.IsNaN(back.Values[4]) || back.Values[3] != 10 {
		t.Errorf("JSON round trip: %s -> %+v (%v)", b, back, err)
	}
}

// TestImportedStepsHaveSeconds imports the 7.0 file's first hour as a
// window: a value a second for each of its 3,600 seconds, its own
// opcounters' rate, and nothing measured as 0 that the server lacks.
func TestImportedStepsHaveSeconds(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	rep, err := Import(ctx, st, []string{file70a}, Options{Windows: []Window{{Name: "hour", Offsets: true, ToOff: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Steps(ctx, rep.Runs[0].Run)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps %+v (%v)", steps, err)
	}
	hour := record.StepFromStore(steps[1])
	ss := hour.ServerSeconds
	if ss == nil || len(ss.Ops.Values) != 3600 || len(ss.Ops.PerSecond()) != 3600 {
		t.Fatalf("server seconds %+v, want 3600 seconds", ss)
	}
	var total float64
	for _, c := range hour.Server.Opcounters {
		total += c
	}
	// 36 operations in the hour (the idle server's own commands).
	if total != 36 || *ss.Ops.Step != total/hour.End.Sub(hour.Start).Seconds() {
		t.Errorf("ops %v over the hour, rate %v; want 36 and their rate", total, *ss.Ops.Step)
	}
	if m := record.MeasuresOf(hour); m.OpsPerSec == nil || *m.OpsPerSec != *ss.Ops.Step || m.PagesReadPerOp == nil || *m.PagesReadPerOp != 0 ||
		m.CacheMean == nil || *m.CacheMean < 180e3 || *m.CacheMean > 200e3 {
		t.Errorf("measures %+v", m)
	}
	// No read finished in the hour: its latency is not measured, not 0.
	if v := ss.ReadLatency; v == nil || v.Step != nil || len(v.PerSecond()) != 0 {
		t.Errorf("read latency %+v, want a series with no value", v)
	}
	if m := record.MeasuresOf(hour); m.ReadLatencyMicros != nil {
		t.Errorf("read latency %v, want not measured", *m.ReadLatencyMicros)
	}
}

// TestSecondsAVersionLacks imports a 3.2 mongod (no opLatencies, no
// application-thread eviction time) and a 4.4 mongos (no WiredTiger, no
// opLatencies in its serverStatus): what the server does not report is a
// nil series, shown "–", never a series of zeros.
func TestSecondsAVersionLacks(t *testing.T) {
	for _, tc := range []struct {
		path    string
		seconds int
		has     []string
	}{
		{file326, 1189, []string{"ops", "pages read", "cache", "dirty"}},
		{testdata + "4.4.2/karthi9792+mongodb--metrics.2021-01-15T06-23-00Z-00000", 5312, []string{"ops"}},
	} {
		ctx := context.Background()
		st := openStore(t)
		rep, err := Import(ctx, st, []string{tc.path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := st.Steps(ctx, rep.Runs[0].Run)
		if err != nil {
			t.Fatal(err)
		}
		ss := record.StepFromStore(steps[0]).ServerSeconds
		if ss == nil {
			t.Fatalf("%s: no server seconds", tc.path)
		}
		series := map[string]*record.ServerSeries{"ops": ss.Ops, "read latency": ss.ReadLatency, "write latency": ss.WriteLatency,
			"pages read": ss.PagesRead, "app evict": ss.AppEvict, "cache": ss.Cache, "dirty": ss.Dirty}
		for name, s := range series {
			want := slices.Contains(tc.has, name)
			if got := s != nil; got != want {
				t.Errorf("%s: %s series present %v, want %v", filepath.Base(tc.path), name, got, want)
			}
			if s != nil && len(s.Values) != tc.seconds {
				t.Errorf("%s: %s has %d seconds, want %d", filepath.Base(tc.path), name, len(s.Values), tc.seconds)
			}
		}
		m := record.MeasuresOf(record.StepFromStore(steps[0]))
		if m.OpsPerSec == nil || m.ReadLatencyMicros != nil || m.AppEvictMicrosPerSec != nil {
			t.Errorf("%s: measures %+v", tc.path, m)
		}
	}
}

// Package testruns records, for tests, runs derived from recorded ones: a
// copy of a run, as it was or with its steps made slower by a known amount,
// written through the store's API, so that a comparison of the two has an
// answer the test knows. Tests import it from _test files only.
package testruns

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"wtd/engine/store"
)

// Copy records a copy of run from: its playbook text, parameters, host,
// trigger, servers, steps (with their figures) and events, started one
// second after the original ended. It returns the copy's id.
func Copy(t testing.TB, st *store.Store, from int64) int64 {
	t.Helper()
	return derive(t, st, from, func(map[string]any) {})
}

// Slower records a copy of run from (as Copy) in which every workload step
// is slower than the original's slowest second in every second: each
// second's operation counts are divided, and its p99s multiplied, by factor
// times the spread (highest over lowest) of those of the run's full
// seconds, and the step's totals with them (ops/s and count divided, p50
// multiplied by factor, p99 by the p99s' multiplier). A load's docs/s is
// divided by factor, its batch latencies multiplied by it. Server figures
// stay as they were. It returns the copy's id.
func Slower(t testing.TB, st *store.Store, from int64, factor float64) int64 {
	t.Helper()
	steps, err := st.Steps(context.Background(), from)
	if err != nil {
		t.Fatal(err)
	}
	opsLo, opsHi, p99Lo, p99Hi := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, s := range steps {
		for _, p := range fullSeconds(t, s.Results) {
			n, q := pointFigures(p)
			opsLo, opsHi = math.Min(opsLo, n), math.Max(opsHi, n)
			if q > 0 {
				p99Lo, p99Hi = math.Min(p99Lo, q), math.Max(p99Hi, q)
			}
		}
	}
	if opsHi > 0 && !(opsLo > 0) {
		t.Fatalf("run %d has a full second without an operation: it cannot be made slower in every second", from)
	}
	opsBy, p99By := factor, factor
	if opsHi > 0 {
		opsBy *= opsHi / opsLo
	}
	if p99Hi > 0 {
		p99By *= p99Hi / p99Lo
	}
	return derive(t, st, from, func(result map[string]any) {
		switch {
		case result["series"] != nil:
			slowerWorkload(result, opsBy, p99By, factor)
		case result["docs_per_sec"] != nil:
			scale(result, "docs_per_sec", 1/factor)
			if b, ok := result["batch"].(map[string]any); ok {
				scale(b, "p50_micros", factor)
				scale(b, "p99_micros", factor)
			}
		}
	})
}

// slowerWorkload changes a workload's recorded result in place.
func slowerWorkload(result map[string]any, opsBy, p99By, p50By float64) {
	series, _ := result["series"].([]any)
	for _, p := range series {
		point, _ := p.(map[string]any)
		counts, _ := point["counts"].(map[string]any)
		for op, c := range counts {
			if n, ok := c.(float64); ok {
				counts[op] = math.Floor(n / opsBy)
			}
		}
		p99s, _ := point["p99_micros"].(map[string]any)
		for op := range p99s {
			scale(p99s, op, p99By)
		}
	}
	stats := []any{result["total"]}
	if ops, ok := result["ops"].(map[string]any); ok {
		for _, s := range ops {
			stats = append(stats, s)
		}
	}
	for _, s := range stats {
		if m, ok := s.(map[string]any); ok {
			scale(m, "ops_per_sec", 1/opsBy)
			m["count"] = math.Floor(m["count"].(float64) / opsBy)
			scale(m, "p50_micros", p50By)
			scale(m, "p99_micros", p99By)
		}
	}
}

// scale multiplies m[key] by by, if it is a number.
func scale(m map[string]any, key string, by float64) {
	if v, ok := m[key].(float64); ok {
		m[key] = v * by
	}
}

// fullSeconds are the points of a recorded workload result's series that
// a comparison tests: not the warm-up's, not the last (partial) one.
func fullSeconds(t testing.TB, results json.RawMessage) []map[string]any {
	var r struct {
		Result struct {
			Series []map[string]any `json:"series"`
		} `json:"result"`
	}
	if len(results) == 0 || json.Unmarshal(results, &r) != nil || len(r.Result.Series) < 2 {
		return nil
	}
	var out []map[string]any
	for _, p := range r.Result.Series[:len(r.Result.Series)-1] {
		if w, _ := p["warmup"].(bool); !w {
			out = append(out, p)
		}
	}
	return out
}

// pointFigures are a second's operations (all types) and its highest p99.
func pointFigures(p map[string]any) (ops, p99 float64) {
	counts, _ := p["counts"].(map[string]any)
	p99s, _ := p["p99_micros"].(map[string]any)
	for op, c := range counts {
		n, _ := c.(float64)
		ops += n
		if q, _ := p99s[op].(float64); n > 0 && q > p99 {
			p99 = q
		}
	}
	return ops, p99
}

// derive records a copy of run from with each step's result changed by
// change (the decoded "result" of its recorded results).
func derive(t testing.TB, st *store.Store, from int64, change func(result map[string]any)) int64 {
	t.Helper()
	ctx := context.Background()
	r, err := st.GetRun(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	servers, err := st.Servers(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Steps(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	events, err := st.Events(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	shift := r.EndedAt.Sub(r.StartedAt) + time.Second
	if r.EndedAt.IsZero() {
		t.Fatalf("run %d has not ended", from)
	}
	info := r.RunInfo
	info.StartedAt, info.OwnerPID, info.OwnerHost = r.StartedAt.Add(shift), 0, ""
	id, err := st.CreateRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		s.AddedAt = s.AddedAt.Add(shift)
		if err := st.AddServer(ctx, id, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range steps {
		sid, err := st.CreateStep(ctx, store.StepInfo{RunID: id, Name: s.Name, Labels: s.Labels, StartedAt: s.StartedAt.Add(shift),
			Settings: s.Settings, Provenance: s.Provenance})
		if err != nil {
			t.Fatal(err)
		}
		results := s.Results
		if len(results) > 0 {
			var rec map[string]any
			if err := json.Unmarshal(results, &rec); err != nil {
				t.Fatalf("decode the results of step %d of run %d: %v", s.Seq, from, err)
			}
			if res, ok := rec["result"].(map[string]any); ok {
				change(res)
			}
			if results, err = json.Marshal(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.FinishStep(ctx, sid, store.StepResult{Status: s.Status, Error: s.Error, EndedAt: s.EndedAt.Add(shift), Results: results}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range events {
		st.AddEvent(id, ev.TS.Add(shift), ev.Level, ev.Source, ev.Message, ev.Attrs)
	}
	if err := st.FinishRun(ctx, id, r.Status, r.Reason, r.EndedAt.Add(shift)); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return id
}

// Reads records an ok run of the playbook at path (whose text is text)
// with one step, "reads", that finished counts[i] reads (rounded to whole
// reads, as a run records them) in its second i
// with a p99 of p99s[i] µs, then a partial second of one read; its totals
// are the mean throughput, the median p99 and a third of it as p50. It
// returns the run's id.
func Reads(t testing.TB, st *store.Store, path, text string, counts, p99s []float64) int64 {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: path, Playbook: text, StartedAt: start})
	if err != nil {
		t.Fatal(err)
	}
	sid, err := st.CreateStep(ctx, store.StepInfo{RunID: id, Name: "reads", StartedAt: start})
	if err != nil {
		t.Fatal(err)
	}
	var series []map[string]any
	total := 0.0
	for i, c := range counts {
		c = math.Round(c)
		series = append(series, map[string]any{"second": i, "counts": map[string]any{"read": c}, "p99_micros": map[string]any{"read": p99s[i]}})
		total += c
	}
	series = append(series, map[string]any{"second": len(counts), "counts": map[string]any{"read": 1}, "p99_micros": map[string]any{"read": p99s[0]}})
	sorted := append([]float64(nil), p99s...)
	slices.Sort(sorted)
	stats := map[string]any{"count": total + 1, "ops_per_sec": total / float64(len(counts)), "p50_micros": sorted[len(sorted)/2] / 3, "p99_micros": sorted[len(sorted)/2]}
	b, err := json.Marshal(map[string]any{"result": map[string]any{"total": stats, "ops": map[string]any{"read": stats}, "series": series}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishStep(ctx, sid, store.StepResult{Status: store.StatusOK, Results: b, EndedAt: start.Add(time.Duration(len(counts)) * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, id, store.StatusOK, "", start.Add(time.Duration(len(counts)+1)*time.Second)); err != nil {
		t.Fatal(err)
	}
	return id
}

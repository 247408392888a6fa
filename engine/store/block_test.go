package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// decodeBlockFrame decodes a block frame and returns its samples.
func decodeBlockFrame(t *testing.T, frame []byte) []codecSample {
	t.Helper()
	var d frameDecoder
	if err := d.decode(frame); err != nil {
		t.Fatal(err)
	}
	if !d.block {
		t.Fatalf("flags %#x: not a block", frame[0])
	}
	var out []codecSample
	for s := range d.blk.n {
		d.blockSample(s)
		out = append(out, codecSample{slices.Clone(d.ids), slices.Clone(d.vals)})
	}
	return out
}

// TestBlockRoundTrip encodes streams in which metrics appear and disappear
// and special values (NaN payloads, -0, ±Inf, huge integers) turn up, and
// checks every sample bit for bit: a metric a sample lacks stays absent.
func TestBlockRoundTrip(t *testing.T) {
	for _, tc := range []struct{ n, pool int }{{1, 5}, {2, 1}, {7, 30}, {300, 40}, {64, 0}} {
		t.Run(fmt.Sprintf("%dx%d", tc.n, tc.pool), func(t *testing.T) {
			stream := randomStream(uint64(tc.n), tc.n, tc.pool)
			b := blockBuilder{max: tc.n}
			for i, s := range stream {
				full := b.add(int64(1e9)*int64(i)+int64(i*i%7), s.ids, s.vals)
				if full != (i == tc.n-1) {
					t.Fatalf("sample %d: full = %v", i, full)
				}
			}
			var e blockEncoder
			frame := e.encodeBuilt(&b)
			got := decodeBlockFrame(t, frame)
			if len(got) != len(stream) {
				t.Fatalf("%d samples, want %d", len(got), len(stream))
			}
			for i := range stream {
				var d frameDecoder
				d.ids, d.vals = got[i].ids, got[i].vals
				sameSample(t, i, &d, stream[i])
				if len(got[i].ids) != len(stream[i].ids) {
					t.Fatalf("sample %d: %d metrics, want %d", i, len(got[i].ids), len(stream[i].ids))
				}
			}
			var d frameDecoder
			if err := d.decode(frame); err != nil {
				t.Fatal(err)
			}
			for i := range stream {
				if want := int64(1e9)*int64(i) + int64(i*i%7); d.blk.ts[i] != want {
					t.Fatalf("sample %d at +%d, want +%d", i, d.blk.ts[i], want)
				}
			}
		})
	}
}

// TestBlockRejectsDamage cuts and flips a block's bytes: decoding fails
// with errCorrupt or gives some samples, and never panics.
func TestBlockRejectsDamage(t *testing.T) {
	stream := randomStream(3, 20, 12)
	b := blockBuilder{max: 100}
	for i, s := range stream {
		b.add(int64(i)*1000, s.ids, s.vals)
	}
	var e blockEncoder
	for _, frame := range [][]byte{slices.Clone(e.encodeBuilt(&b)), rawBlock(&b)} {
		for cut := range len(frame) {
			var d frameDecoder
			if err := d.decode(frame[:cut]); err == nil && cut < 2 {
				t.Errorf("a block cut at %d bytes decoded", cut)
			}
		}
		for i := range frame {
			bad := slices.Clone(frame)
			bad[i] ^= 0x5a
			var d frameDecoder
			_ = d.decode(bad) // must not panic
		}
	}
}

// rawBlock is b's block without compression, so that damage reaches the
// block's own fields.
func rawBlock(b *blockBuilder) []byte {
	var e blockEncoder
	e.encodeBuilt(b)
	return append([]byte{flagBlock}, e.body...)
}

// TestSamplesInBlocks writes chains of samples that become blocks of 8
// (AddSample, and AddBlock between them), and reads them back bit for bit
// while the last block is open, after the run finishes, and after the
// store is closed and opened again.
func TestSamplesInBlocks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	s := openTest(t, path, Options{KeyframeEvery: 5, BlockSamples: 8, FlushInterval: -1})
	t0 := time.Unix(1700000000, 0)
	run, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "b.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	maps := sampleStream(5, 45, 30)
	var want []Sample
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 1001 * time.Millisecond) }
	// Samples 20..29 come as one block of the metrics all ten share.
	var common []string
	for name := range maps[20] {
		if !slices.ContainsFunc(maps[20:30], func(m map[string]float64) bool { _, ok := m[name]; return !ok }) {
			common = append(common, name)
		}
	}
	slices.Sort(common)
	for i, m := range maps {
		switch {
		case i == 20:
			blk := Block{Names: common}
			for k := 20; k < 30; k++ {
				blk.TS = append(blk.TS, at(k))
			}
			for _, name := range common {
				for k := 20; k < 30; k++ {
					blk.Values = append(blk.Values, maps[k][name])
				}
			}
			s.AddBlock(run, "server:m1", blk)
			for k := 20; k < 30; k++ {
				sub := map[string]float64{}
				for _, name := range common {
					sub[name] = maps[k][name]
				}
				want = append(want, Sample{TS: at(k), Metrics: sub})
			}
		case i > 20 && i < 30:
		default:
			s.AddSample(run, "server:m1", at(i), m)
			want = append(want, Sample{TS: at(i), Metrics: m})
		}
		s.AddSample(other, "server:m1", at(i), map[string]float64{"x": float64(i)})
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := s.Samples(ctx, run, "server:m1", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpSamples); diff != "" {
			t.Fatalf("%s: Samples (-want +got):\n%s", when, diff)
		}
		for _, r := range [][2]int{{0, 0}, {3, 9}, {7, 8}, {8, 15}, {18, 33}, {25, 25}, {len(want) - 1, len(want) - 1}} {
			got, err := s.Samples(ctx, run, "server:m1", want[r[0]].TS, want[r[1]].TS)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[r[0]:r[1]+1], got, cmpSamples); diff != "" {
				t.Errorf("%s: Samples %d..%d (-want +got):\n%s", when, r[0], r[1], diff)
			}
		}
		cols, err := s.SeriesSet(ctx, run, "server:m1", []string{"m.3", "nosuch"})
		if err != nil {
			t.Fatal(err)
		}
		for i, smp := range want {
			v, ok := smp.Metrics["m.3"]
			if got := cols.Values[0][i]; ok != !math.IsNaN(got) || ok && math.Float64bits(got) != math.Float64bits(v) && !math.IsNaN(v) {
				t.Fatalf("%s: sample %d: m.3 = %v, want %v (present %v)", when, i, got, v, ok)
			}
			if !math.IsNaN(cols.Values[1][i]) {
				t.Fatalf("%s: sample %d: a metric never recorded reads %v, want NaN", when, i, cols.Values[1][i])
			}
		}
		for r, n := range map[int64]int64{run: int64(len(want)), other: int64(len(maps))} {
			if got, err := s.SampleCount(ctx, r); err != nil || got != n {
				t.Errorf("%s: SampleCount(%d) = %d, %v; want %d", when, r, got, err, n)
			}
		}
	}
	check("open block")
	var rows, blocks int
	db := s.r
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE `+isBlockSQL+`) FROM samples WHERE run_id = ?`, run).Scan(&rows, &blocks); err != nil {
		t.Fatal(err)
	}
	if blocks < 4 || rows >= len(want) {
		t.Errorf("%d rows, %d of them blocks, for %d samples: want blocks of up to 8", rows, blocks, len(want))
	}
	if err := s.FinishRun(ctx, run, StatusOK, "", at(50)); err != nil {
		t.Fatal(err)
	}
	check("run finished")
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, path, Options{})
	check("opened again")
	var ones int
	if err := s.r.QueryRow(`SELECT count(*) FROM samples WHERE NOT ` + isBlockSQL).Scan(&ones); err != nil {
		t.Fatal(err)
	}
	if ones != 0 {
		t.Errorf("%d rows of one sample after the runs finished and the store closed, want every sample in a block", ones)
	}
}

// TestOldFramesStillRead makes a database as a wtd before blocks did
// (schema 9, one frame a row), opens it with this store and reads its
// samples, then adds more to the same chain.
func TestOldFramesStillRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, migrations[:9]); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO runs (id, playbook_path, playbook, playbook_sha256, started_at, status, owner_pid, owner_host)
		VALUES (1, 'old.lua', '', '', ?, 'ok', 1, 'h')`, t0.UnixNano())
	exec(`INSERT INTO sample_sources (id, name) VALUES (1, 'server:m1')`)
	maps := sampleStream(9, 23, 20)
	ids := map[string]int64{}
	for k := range 20 {
		ids[fmt.Sprintf("m.%d", k)] = int64(k + 1)
		exec(`INSERT INTO metric_names (id, name) VALUES (?, ?)`, k+1, fmt.Sprintf("m.%d", k))
	}
	enc := newFrameEncoder(6, newDeflater())
	var want []Sample
	for i, m := range maps {
		var s codecSample
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			s.ids, s.vals = append(s.ids, ids[name]), append(s.vals, m[name])
		}
		// Old frames hold ids in order; names sort as their ids here only
		// by luck, so sort by id.
		idx := make([]int, len(s.ids))
		for k := range idx {
			idx[k] = k
		}
		slices.SortFunc(idx, func(a, b int) int { return int(s.ids[a] - s.ids[b]) })
		var sorted codecSample
		for _, k := range idx {
			sorted.ids, sorted.vals = append(sorted.ids, s.ids[k]), append(sorted.vals, s.vals[k])
		}
		frame, key := enc.encode(sorted.ids, sorted.vals)
		ts := t0.Add(time.Duration(i) * time.Second)
		exec(`INSERT INTO samples (run_id, source_id, ts, keyframe, frame) VALUES (1, 1, ?, ?, ?)`, ts.UnixNano(), key, frame)
		want = append(want, Sample{TS: ts, Metrics: m})
	}
	db.Close()

	s := openTest(t, path, Options{BlockSamples: 4})
	got, err := s.Samples(ctx, 1, "server:m1", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpSamples); diff != "" {
		t.Fatalf("old frames (-want +got):\n%s", diff)
	}
	more := sampleStream(10, 9, 20)
	for i, m := range more {
		ts := t0.Add(time.Duration(100+i) * time.Second)
		s.AddSample(1, "server:m1", ts, m)
		want = append(want, Sample{TS: ts, Metrics: m})
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Samples(ctx, 1, "server:m1", want[20].TS, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[20:], got, cmpSamples); diff != "" {
		t.Fatalf("old frames then blocks (-want +got):\n%s", diff)
	}
	if n, err := s.SampleCount(ctx, 1); err != nil || n != int64(len(want)) {
		t.Errorf("SampleCount = %d, %v; want %d", n, err, len(want))
	}
}

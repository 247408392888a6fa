package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// openTest opens a store in the test's temporary directory and closes it at
// the end of the test, failing on a Close error.
func openTest(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "wtd.db")
	}
	s, err := OpenWith(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// userVersion reads the schema version straight from the file.
func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA user_version = " + strconv.Itoa(v)); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string) // before the Open under test
		wantErr string
	}{
		{"fresh file in new directories", func(*testing.T, string) {}, ""},
		{"reopen is idempotent", func(t *testing.T, path string) {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"newer schema", func(t *testing.T, path string) {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			setUserVersion(t, path, len(migrations)+1)
		}, "is newer than this wtd knows"},
		{"not a database", func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite ", 100)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "open store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a", "b", "wtd.db")
			tt.prepare(t, path)
			s, err := Open(ctx, path)
			if tt.wantErr != "" {
				if err == nil {
					s.Close(ctx)
					t.Fatalf("Open: no error, want %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			runs, err := s.ListRuns(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if v := userVersion(t, path); v != len(migrations) {
				t.Errorf("user_version = %d, want %d", v, len(migrations))
			}
			if tt.name == "reopen is idempotent" && len(runs) != 1 {
				t.Errorf("after reopen %d runs, want the 1 created before", len(runs))
			}
		})
	}
}

func TestMigrateAppliesOnlyNewSteps(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	v1 := []string{"CREATE TABLE a (x INTEGER)"}
	// Step 2 fails if step 1 runs twice (a second INSERT would make two rows).
	v2 := append(v1, "INSERT INTO a VALUES (1); CREATE TABLE b (y INTEGER)")
	for i, list := range [][]string{v1, v1, v2, v2} {
		if err := migrate(ctx, db, list); err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM a").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("step 2 ran %d times, want 1", n)
	}
	if err := migrate(ctx, db, v1); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("migrate back to v1: %v, want a newer-schema error", err)
	}
	if err := migrate(ctx, db, append(v2, "NOT SQL")); err == nil || !strings.Contains(err.Error(), "migrate schema to 3") {
		t.Errorf("migrate with a bad step: %v, want it named", err)
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 2 {
		t.Errorf("user_version after a failed step = %d (%v), want 2", v, err)
	}
}

func TestCloseFlushesPending(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	s, err := OpenWith(ctx, path, Options{FlushInterval: -1, BatchSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "p.lua"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	for i := range 250 {
		s.AddSample(id, "host", t0.Add(time.Duration(i)*time.Second), map[string]float64{"cpu.user": float64(i)})
	}
	s.AddEvent(id, t0, "info", "engine", "last words", nil)
	if n, err := s.SampleCount(ctx, id); err != nil || n != 0 {
		t.Fatalf("before Close: %d samples (%v), want 0 with the timer off", n, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if _, err := s.CreateRun(ctx, RunInfo{}); !errors.Is(err, ErrClosed) {
		t.Errorf("CreateRun after Close: %v, want ErrClosed", err)
	}

	s2 := openTest(t, path, Options{})
	if n, err := s2.SampleCount(ctx, id); err != nil || n != 250 {
		t.Errorf("after Close: %d samples (%v), want 250", n, err)
	}
	if ev, err := s2.Events(ctx, id); err != nil || len(ev) != 1 {
		t.Errorf("after Close: %d events (%v), want 1", len(ev), err)
	}
}

func TestAsyncErrorsSurfaceAndSpareNeighbours(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{FlushInterval: -1, KeyframeEvery: 1000})
	id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "p.lua"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	for i := range 10 {
		s.AddSample(id, "host", t0.Add(time.Duration(i)*time.Second), map[string]float64{"x": float64(i)})
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// One batch: good samples around one for a run that does not exist.
	for i := 10; i < 20; i++ {
		if i == 15 {
			s.AddSample(id+99, "host", t0, map[string]float64{"x": 1})
		}
		s.AddSample(id, "host", t0.Add(time.Duration(i)*time.Second), map[string]float64{"x": float64(i)})
	}
	err = s.Flush(ctx)
	if err == nil || !strings.Contains(err.Error(), "add sample of host to run") {
		t.Fatalf("Flush: %v, want the failed sample named", err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Errorf("second Flush: %v, want the error reported once", err)
	}
	pts, err := s.Series(ctx, id, "host", "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 20 {
		t.Fatalf("%d points, want 20", len(pts))
	}
	for i, p := range pts {
		if p.Value != float64(i) {
			t.Errorf("point %d = %v, want %d", i, p.Value, i)
		}
	}
}

func TestOpenOddPaths(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"with space/wtd.db", "q#x?y/w%20d.db", "ünï/wtd.db"} {
		path := filepath.Join(t.TempDir(), name)
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %q: %v", name, err)
		}
		if _, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "p.lua"}); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%q: the database is not where asked: %v", name, err)
		}
	}
}

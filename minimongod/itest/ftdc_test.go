package itest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/ftdc"
)

// readDiagnosticData reads dbpath/diagnostic.data to the end.
func readDiagnosticData(t *testing.T, dbpath string) (chunks []*ftdc.Chunk, meta []*ftdc.Metadata, skips []ftdc.Skip) {
	t.Helper()
	r, err := ftdc.Open(filepath.Join(dbpath, "diagnostic.data"))
	if err != nil {
		return nil, nil, nil
	}
	defer r.Close()
	for {
		it, err := r.Next()
		if err == io.EOF {
			return
		}
		switch v := it.(type) {
		case *ftdc.Chunk:
			chunks = append(chunks, v.Clone())
		case *ftdc.Metadata:
			meta = append(meta, v)
		case ftdc.Skip:
			skips = append(skips, v)
		}
	}
}

func TestDiagnosticDataIsWrittenAsMongodDoes(t *testing.T) {
	s := start(t, "--setParameter", "diagnosticDataCollectionPeriodMillis=100",
		"--setParameter", "diagnosticDataCollectionSamplesPerChunk=5")
	// Five samples a chunk, an interim file every 10 (the default):
	// wait for three archived chunks.
	deadline := time.Now().Add(30 * time.Second)
	var chunks []*ftdc.Chunk
	var meta []*ftdc.Metadata
	var skips []ftdc.Skip
	for {
		chunks, meta, skips = readDiagnosticData(t, s.dbpath)
		archived := 0
		for _, c := range chunks {
			if !strings.HasSuffix(c.File, "metrics.interim") {
				archived++
			}
		}
		if archived >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d chunks after 30 s", archived)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(skips) != 0 {
		t.Errorf("skips: %v", skips)
	}
	if len(meta) != 1 {
		t.Fatalf("%d metadata documents", len(meta))
	}
	if v, err := meta[0].Section("buildInfo").LookupErr("version"); err != nil || v.StringValue() != "4.4.29" {
		t.Errorf("buildInfo.version %v %v", v, err)
	}
	if argv, err := meta[0].Section("getCmdLineOpts").LookupErr("argv"); err != nil || !strings.Contains(argv.String(), "diagnosticDataCollectionPeriodMillis=100") {
		t.Errorf("getCmdLineOpts.argv %v %v", argv, err)
	}
	if meta[0].Section("hostInfo") == nil {
		t.Error("no hostInfo")
	}
	name := filepath.Base(chunks[0].File)
	if !strings.HasPrefix(name, "metrics.") || !strings.HasSuffix(name, "-00000") {
		t.Errorf("archive named %s", name)
	}
	var last int64
	for _, c := range chunks[:3] {
		if c.Samples != 5 || c.TimeSource != "serverStatus.start" {
			t.Errorf("chunk %s: %d samples, times from %s", c.ID, c.Samples, c.TimeSource)
		}
		up := c.Lookup("serverStatus.uptimeMillis")
		for i, v := range up {
			if v <= last {
				t.Fatalf("chunk %s sample %d: uptimeMillis %d after %d", c.ID, i, v, last)
			}
			last = v
		}
		for _, m := range []string{"systemMetrics.cpu.user_ms", "systemMetrics.memory.MemTotal_kb", "serverStatus.wiredTiger.cache.bytes currently in the cache", "serverStatus.ok"} {
			if c.Index(m) < 0 {
				t.Errorf("chunk %s has no %s", c.ID, m)
			}
		}
		// Samples follow the period, 100 ms (later under load, never
		// sooner on average).
		for i := 1; i < c.Samples; i++ {
			if c.Times[i] <= c.Times[i-1] {
				t.Errorf("chunk %s: sample %d not after the one before", c.ID, i)
			}
		}
	}

	// 15 samples on period boundaries: 14 periods, less the first one's
	// lateness (under a period).
	if span := chunks[2].Times[4] - chunks[0].Times[0]; span < 1300 {
		t.Errorf("15 samples over %d ms, want 1300 or more", span)
	}

	// The Python decoder agrees on the archive file.
	archive := chunks[0].File
	names := []string{"serverStatus.uptimeMillis", "serverStatus.connections.totalCreated", "systemMetrics.cpu.user_ms", "serverStatus.start", "serverStatus.wiredTiger.cache.bytes currently in the cache"}
	out, err := exec.CommandContext(context.Background(), pythonWithPymongo, append([]string{"../../internal/ftdc/testdata/ftdc_values.py", archive}, names...)...).Output()
	if err != nil {
		t.Fatalf("ftdc_values.py: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	i := 0
	for _, c := range chunks {
		if c.File != archive {
			continue
		}
		for smp := 0; smp < c.Samples; smp++ {
			var f []string
			for _, n := range names {
				f = append(f, strconv.FormatInt(c.Lookup(n)[smp], 10))
			}
			if i >= len(lines) || lines[i] != strings.Join(f, "\t") {
				t.Fatalf("sample %d: %q, the Python decoder has %q", i, strings.Join(f, "\t"), lines[min(i, len(lines)-1)])
			}
			i++
		}
	}

	// Turned off at runtime and shut down, it writes what it holds into the
	// archive: no interim file is left to repeat it.
	s.run(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "diagnosticDataCollectionEnabled", Value: false}})
	s.stop()
	if _, err := os.Stat(filepath.Join(s.dbpath, "diagnostic.data", "metrics.interim")); !os.IsNotExist(err) {
		t.Errorf("interim file after capture stopped: %v", err)
	}
}

func TestDiagnosticDataParameters(t *testing.T) {
	s := start(t)
	got := s.run(t, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "diagnosticDataCollectionEnabled", Value: 1},
		{Key: "diagnosticDataCollectionPeriodMillis", Value: 1}, {Key: "diagnosticDataCollectionDirectorySizeMB", Value: 1},
		{Key: "diagnosticDataCollectionFileSizeMB", Value: 1}, {Key: "diagnosticDataCollectionSamplesPerChunk", Value: 1},
		{Key: "diagnosticDataCollectionSamplesPerInterimUpdate", Value: 1}})
	want := map[string]any{"diagnosticDataCollectionEnabled": true, "diagnosticDataCollectionPeriodMillis": int32(1000),
		"diagnosticDataCollectionDirectorySizeMB": int32(200), "diagnosticDataCollectionFileSizeMB": int32(10),
		"diagnosticDataCollectionSamplesPerChunk": int32(300), "diagnosticDataCollectionSamplesPerInterimUpdate": int32(10)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v (%T), want %v", k, got[k], got[k], v)
		}
	}
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"diagnosticDataCollectionPeriodMillis", 99, "Invalid value for parameter diagnosticDataCollectionPeriodMillis: 99 is not greater than or equal to 100"},
		{"diagnosticDataCollectionSamplesPerChunk", 1, "Invalid value for parameter diagnosticDataCollectionSamplesPerChunk: 1 is not greater than or equal to 2"},
		{"diagnosticDataCollectionSamplesPerInterimUpdate", 1, "is not greater than or equal to 2"},
		{"diagnosticDataCollectionDirectorySizeMB", 9, "is not greater than or equal to 10"},
		{"diagnosticDataCollectionFileSizeMB", 201, "diagnosticDataCollectionFileSizeMB must be less than or equal to '200' which is the current value of diagnosticDataCollectionDirectorySizeMB."},
		{"diagnosticDataCollectionFileSizeMB", 0, "is not greater than or equal to 1"},
	} {
		ce := s.runErr(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: tc.name, Value: tc.v}})
		if !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s=%v: %q, want %q", tc.name, tc.v, ce.Message, tc.want)
		}
	}
	s.run(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "diagnosticDataCollectionFileSizeMB", Value: 20}})
	ce := s.runErr(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "diagnosticDataCollectionDirectorySizeMB", Value: 15}})
	if !strings.Contains(ce.Message, "diagnosticDataCollectionDirectorySizeMB must be greater than or equal to '20' which is the current value of diagnosticDataCollectionFileSizeMB.") {
		t.Errorf("directory below the file size: %q", ce.Message)
	}
}

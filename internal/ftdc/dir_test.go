package ftdc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func testDirConfig() DirConfig {
	return DirConfig{SamplesPerChunk: 5, SamplesPerInterimUpdate: 2, Metadata: func(at time.Time) (any, error) {
		return bson.D{{Key: "start", Value: bson.NewDateTimeFromTime(at)}, {Key: "buildInfo", Value: bson.D{{Key: "version", Value: "4.4.29"}}}}, nil
	}}
}

func addDirSamples(t *testing.T, d *Dir, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		doc, _, _ := testSample(i)
		if err := d.Add(time.UnixMilli(1_700_000_000_000+int64(i)*1000), doc); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDirWritesArchiveAndInterimAsMongod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diagnostic.data")
	d, err := OpenDir(path, testDirConfig())
	if err != nil {
		t.Fatal(err)
	}
	addDirSamples(t, d, 0, 23)
	if got := filepath.Base(d.ArchiveName()); got != "metrics.2023-11-14T22-13-20Z-00000" {
		t.Errorf("archive %s", got)
	}
	archive := readAll(t, d.ArchiveName())
	if len(archive.meta) != 1 || archive.meta[0].Section("buildInfo") == nil || len(archive.chunks) != 4 {
		t.Fatalf("archive: %d metadata, %d chunks", len(archive.meta), len(archive.chunks))
	}
	checkSeries(t, archive.chunks, 0, 20)
	// Written at 2 pending samples, not yet at 3.
	checkSeries(t, readAll(t, filepath.Join(path, "metrics.interim")).chunks, 20, 22)

	// A crash: a new process finds the interim file and writes it into its
	// archive after the metadata; the _ids go back in time there.
	d2, err := OpenDir(path, testDirConfig())
	if err != nil {
		t.Fatal(err)
	}
	addDirSamples(t, d2, 100, 101)
	next := readAll(t, d2.ArchiveName())
	if d2.ArchiveName() == d.ArchiveName() || len(next.meta) != 1 || len(next.chunks) != 1 {
		t.Fatalf("new archive %s: %d metadata, %d chunks", d2.ArchiveName(), len(next.meta), len(next.chunks))
	}
	checkSeries(t, next.chunks, 20, 22)
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "metrics.interim")); !os.IsNotExist(err) {
		t.Errorf("interim after Close: %v", err)
	}
	all := readAll(t, path)
	if all.samples != 20+2+1 || len(all.skips) != 0 {
		t.Errorf("directory: %d samples, skips %v", all.samples, all.skips)
	}
	checkSeries(t, all.chunks[len(all.chunks)-1:], 100, 101)
}

func TestDirRotatesAndKeepsItsSize(t *testing.T) {
	path := t.TempDir()
	cfg := testDirConfig()
	cfg.MaxFileSizeBytes, cfg.MaxDirectorySizeBytes = 3000, 8000
	d, err := OpenDir(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := ""
	for i := 0; i < 400; i++ {
		addDirSamples(t, d, i, i+1)
		if first == "" {
			first = d.ArchiveName()
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the first archive is still there: %v", err)
	}
	entries, _ := os.ReadDir(path)
	var total int64
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
		if !strings.HasPrefix(e.Name(), "metrics.2023-11-14T") {
			t.Errorf("file %s", e.Name())
		}
	}
	if len(entries) < 2 || total > cfg.MaxDirectorySizeBytes+cfg.MaxFileSizeBytes {
		t.Errorf("%d files of %d bytes", len(entries), total)
	}
	s := readAll(t, path)
	if len(s.skips) != 0 || len(s.meta) != len(entries) {
		t.Fatalf("skips %v, %d metadata for %d files", s.skips, len(s.meta), len(entries))
	}
	// What is left is the newest samples, in order, up to the last.
	c := s.chunks[len(s.chunks)-1]
	if c.Times[c.Samples-1] != 1_700_000_000_000+399*1000 {
		t.Errorf("last sample at %d", c.Times[c.Samples-1])
	}
}

func TestDirConfigIsChecked(t *testing.T) {
	d, err := OpenDir(t.TempDir(), DirConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetConfig(DirConfig{SamplesPerChunk: 1}); err == nil {
		t.Error("1 sample per chunk accepted")
	}
	if err := d.SetConfig(DirConfig{MaxFileSizeBytes: 20 << 20, MaxDirectorySizeBytes: 10 << 20}); err == nil {
		t.Error("a file larger than the directory accepted")
	}
}

package ftdcimport

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"wtd/engine/store"
)

// realFiles lists the real FTDC files in testdata (SOURCES.md says what
// each is).
func realFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(testdata + "*/*--metrics.*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no real FTDC files in %s: %v", testdata, err)
	}
	return files
}

// storedBytes returns the bytes the database file takes (page_count x
// page_size, after a checkpoint of its WAL), the bytes of its samples
// table alone (its pages, from the dbstat table) and the bytes of the
// samples' frames (the sum of their lengths).
func storedBytes(t testing.TB, path string) (file, samples, frames int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size())`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT sum(pgsize) FROM dbstat WHERE name = 'samples'`).Scan(&samples); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT sum(length(frame)) FROM samples`).Scan(&frames); err != nil {
		t.Fatal(err)
	}
	return file, samples, frames
}

func fileBytes(t testing.TB, paths ...string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// importInto imports paths into a new database in dir and returns its path.
func importInto(t testing.TB, dir string, paths ...string) string {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(dir, "wtd.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, st, paths, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// BenchmarkImportSize imports every real file in testdata into one database
// and reports the stored bytes per FTDC byte: of the whole database file,
// of its samples table and of the samples' frames alone.
//
//	go test ./engine/ftdcimport -run '^$' -bench ImportSize -benchtime 1x
func BenchmarkImportSize(b *testing.B) {
	files := realFiles(b)
	in := fileBytes(b, files...)
	var file, samples, frames int64
	for b.Loop() {
		db := importInto(b, b.TempDir(), files...)
		file, samples, frames = storedBytes(b, db)
	}
	b.ReportMetric(float64(file)/float64(in), "db/ftdc")
	b.ReportMetric(float64(samples)/float64(in), "samples/ftdc")
	b.ReportMetric(float64(frames)/float64(in), "frames/ftdc")
	b.ReportMetric(float64(in)/b.Elapsed().Seconds()*float64(b.N)/1e6, "ftdc-MB/s")
}

// TestStoredSizeWithinFTDC imports each real file in testdata into a
// database of its own and checks that its samples' frames take no more
// bytes than the FTDC file; then all of them into one database, whose
// samples table (its pages: rows, keys and the slack of 4 KiB pages) must
// take no more than the files. The pages of each file's samples and of its
// whole database are logged beside: for a small file the database is
// mostly the metric name dictionary, which every later import shares, and
// a file of 12 KB cannot fill whole pages.
func TestStoredSizeWithinFTDC(t *testing.T) {
	files := realFiles(t)
	for _, path := range files {
		name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		in := fileBytes(t, path)
		file, samples, frames := storedBytes(t, importInto(t, t.TempDir(), path))
		t.Logf("%-70s %8d bytes: frames %.2fx, samples table %.2fx, database %.2fx", name, in,
			float64(frames)/float64(in), float64(samples)/float64(in), float64(file)/float64(in))
		if frames > in {
			t.Errorf("%s: the samples take %d bytes, more than the %d of the FTDC file (%.2fx)", name, frames, in, float64(frames)/float64(in))
		}
	}
	in := fileBytes(t, files...)
	file, samples, frames := storedBytes(t, importInto(t, t.TempDir(), files...))
	t.Logf("all %d files, %d bytes: frames %.2fx, samples table %.2fx, database %.2fx", len(files), in,
		float64(frames)/float64(in), float64(samples)/float64(in), float64(file)/float64(in))
	if samples > in {
		t.Errorf("all files: the samples table takes %d bytes, more than the %d of the files (%.2fx)", samples, in, float64(samples)/float64(in))
	}
}

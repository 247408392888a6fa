package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

func TestImportedFilesAreKnownByContent(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "wtd.db"), Options{})
	if _, ok, err := s.LookupImportedFile(ctx, "ab12"); err != nil || ok {
		t.Fatalf("lookup before any import: ok %v, err %v; want not found", ok, err)
	}
	f := ImportedFile{SHA256: "ab12", Path: "/data/diagnostic.data/metrics.x", Bytes: 1234, Runs: []int64{3, 4}}
	if err := s.RecordImportedFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordImportedFile(ctx, ImportedFile{SHA256: "ab12", Path: "/elsewhere", Bytes: 1234, Runs: []int64{9}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.LookupImportedFile(ctx, "ab12")
	if err != nil || !ok {
		t.Fatalf("lookup: ok %v, err %v", ok, err)
	}
	if got.Path != "/elsewhere" || got.Bytes != 1234 || !slices.Equal(got.Runs, []int64{9}) || got.ImportedAt.IsZero() {
		t.Errorf("lookup = %+v, want the second record", got)
	}
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ImportedFile is an FTDC file wtd import read, known by its content.
type ImportedFile struct {
	SHA256     string // hex
	Path       string
	Bytes      int64
	ImportedAt time.Time
	Runs       []int64 // the runs its samples went into
}

type recordImportOp struct{ f ImportedFile }

func (o *recordImportOp) describe() string { return "record imported file " + o.f.Path }

func (o *recordImportOp) apply(ctx context.Context, w *writer) error {
	runs := o.f.Runs
	if runs == nil {
		runs = []int64{}
	}
	b, err := json.Marshal(runs)
	if err != nil {
		return err
	}
	_, err = w.exec(ctx, `INSERT INTO imported_files (sha256, path, bytes, imported_at, runs) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET path = excluded.path, bytes = excluded.bytes,
			imported_at = excluded.imported_at, runs = excluded.runs`, o.f.SHA256, o.f.Path, o.f.Bytes, o.f.ImportedAt.UnixNano(), string(b))
	return err
}

// RecordImportedFile records that a file was imported; a record of the
// same content is replaced (its runs were removed, and it was imported
// anew).
func (s *Store) RecordImportedFile(ctx context.Context, f ImportedFile) error {
	if f.ImportedAt.IsZero() {
		f.ImportedAt = time.Now()
	}
	return s.do(ctx, &recordImportOp{f: f})
}

// LookupImportedFile returns the record of the file whose content has the
// given sha256; ok is false when it was never imported.
func (s *Store) LookupImportedFile(ctx context.Context, sha string) (f ImportedFile, ok bool, err error) {
	var at int64
	var runs string
	err = s.r.QueryRowContext(ctx, `SELECT sha256, path, bytes, imported_at, runs FROM imported_files WHERE sha256 = ?`, sha).
		Scan(&f.SHA256, &f.Path, &f.Bytes, &at, &runs)
	if errors.Is(err, sql.ErrNoRows) {
		return ImportedFile{}, false, nil
	}
	if err != nil {
		return ImportedFile{}, false, fmt.Errorf("look up imported file %s: %w", sha, err)
	}
	f.ImportedAt = time.Unix(0, at)
	if err := json.Unmarshal([]byte(runs), &f.Runs); err != nil {
		return ImportedFile{}, false, fmt.Errorf("look up imported file %s: runs: %w", sha, err)
	}
	return f, true, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Artifact is a file a playbook wrote in its run directory, kept with the
// run. Content is nil when the file was too large to keep; Note then says
// where it was left.
type Artifact struct {
	Path    string // relative to the run directory
	Size    int64
	Content []byte
	Note    string
}

type addArtifactOp struct {
	runID int64
	a     Artifact
}

func (o *addArtifactOp) describe() string {
	return fmt.Sprintf("keep artifact %s of run %d", o.a.Path, o.runID)
}

func (o *addArtifactOp) apply(ctx context.Context, w *writer) error {
	var content any
	size := o.a.Size
	if o.a.Content != nil {
		b := redactBytes(o.a.Content)
		content, size = b, int64(len(b))
	}
	_, err := w.exec(ctx, `INSERT OR REPLACE INTO artifacts (run_id, path, size, content, note) VALUES (?, ?, ?, ?, ?)`,
		o.runID, RedactURI(o.a.Path), size, content, RedactURI(o.a.Note))
	return err
}

// redactBytes is RedactURI for a file's content: b itself when it holds
// no URI password.
func redactBytes(b []byte) []byte {
	s := string(b)
	if r := RedactURI(s); r != s {
		return []byte(r)
	}
	return b
}

// AddArtifact keeps a file of a run. URI passwords in its content and
// note are masked, as everywhere in the database; the size is then that
// of the content kept.
func (s *Store) AddArtifact(ctx context.Context, runID int64, a Artifact) error {
	return s.do(ctx, &addArtifactOp{runID: runID, a: a})
}

// Artifacts lists the files kept with a run, without their content.
func (s *Store) Artifacts(ctx context.Context, runID int64) ([]Artifact, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT path, size, note FROM artifacts WHERE run_id = ? ORDER BY path`, runID)
	if err != nil {
		return nil, fmt.Errorf("list artifacts of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Artifact
	for rows.Next() {
		var a Artifact
		if err := rows.Scan(&a.Path, &a.Size, &a.Note); err != nil {
			return nil, fmt.Errorf("list artifacts of run %d: %w", runID, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list artifacts of run %d: %w", runID, err)
	}
	return out, nil
}

// ArtifactContent returns one kept file with its content.
func (s *Store) ArtifactContent(ctx context.Context, runID int64, path string) (Artifact, error) {
	a := Artifact{Path: path}
	err := s.r.QueryRowContext(ctx, `SELECT size, content, note FROM artifacts WHERE run_id = ? AND path = ?`, runID, path).
		Scan(&a.Size, &a.Content, &a.Note)
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("artifact %s of run %d: %w", path, runID, ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("artifact %s of run %d: %w", path, runID, err)
	}
	return a, nil
}

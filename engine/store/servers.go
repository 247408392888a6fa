package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ServerRecord is a server a run used: one wtd started, or one it attached
// to. The first server a run records also fills the run's target columns.
type ServerRecord struct {
	Name       string
	Started    bool   // wtd started the process (and may restart it)
	URI        string // password masked when stored
	Binary     string // the binary wtd started; "" when attached
	Version    string // buildInfo.version
	GitVersion string // buildInfo.gitVersion
	PID        int    // 0 when not known
	AddedAt    time.Time
}

type addServerOp struct {
	runID int64
	rec   ServerRecord
}

func (o *addServerOp) describe() string { return fmt.Sprintf("record server of run %d", o.runID) }

func (o *addServerOp) apply(ctx context.Context, w *writer) error {
	r := o.rec
	var pid any
	if r.PID > 0 {
		pid = r.PID
	}
	if _, err := w.exec(ctx, `INSERT INTO servers (run_id, name, started, uri, binary, version, git_version, pid, added_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, name) DO UPDATE SET uri = excluded.uri, version = excluded.version,
			git_version = excluded.git_version, pid = excluded.pid`,
		o.runID, r.Name, r.Started, RedactURI(r.URI), r.Binary, r.Version, r.GitVersion, pid, r.AddedAt.UnixNano()); err != nil {
		return err
	}
	// The run's target is its first server.
	_, err := w.exec(ctx, `UPDATE runs SET target_path = ?, target_uri = ?, target_version = ?
		WHERE id = ? AND target_path = '' AND target_uri = '' AND target_version = ''`,
		r.Binary, RedactURI(r.URI), r.Version, o.runID)
	return err
}

// AddServer records a server of a run (again after a restart: the URI,
// version and pid are updated).
func (s *Store) AddServer(ctx context.Context, runID int64, rec ServerRecord) error {
	if rec.AddedAt.IsZero() {
		rec.AddedAt = time.Now()
	}
	return s.do(ctx, &addServerOp{runID: runID, rec: rec})
}

// Servers returns the servers of a run in the order they were added.
func (s *Store) Servers(ctx context.Context, runID int64) ([]ServerRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, started, uri, binary, version, git_version, pid, added_at
		FROM servers WHERE run_id = ? ORDER BY added_at, name`, runID)
	if err != nil {
		return nil, fmt.Errorf("list servers of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []ServerRecord
	for rows.Next() {
		var r ServerRecord
		var pid sql.NullInt64
		var added int64
		if err := rows.Scan(&r.Name, &r.Started, &r.URI, &r.Binary, &r.Version, &r.GitVersion, &pid, &added); err != nil {
			return nil, fmt.Errorf("list servers of run %d: %w", runID, err)
		}
		r.PID = int(pid.Int64)
		r.AddedAt = time.Unix(0, added)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list servers of run %d: %w", runID, err)
	}
	return out, nil
}

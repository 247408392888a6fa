package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Statuses of runs and steps.
const (
	StatusRunning = "running"
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusAborted = "aborted"
)

// HostFacts describe the machine a run ran on.
type HostFacts struct {
	Cores          int    `json:"cores,omitempty"`
	MemoryBytes    int64  `json:"memoryBytes,omitempty"`
	Kernel         string `json:"kernel,omitempty"`
	Virtualisation string `json:"virtualisation,omitempty"` // "none", "kvm", "docker", ...
	Disk           string `json:"disk,omitempty"`           // the data disk: device, model, rotational or not
}

// RunInfo is what is known when a run starts.
type RunInfo struct {
	PlaybookPath  string
	Playbook      string         // the playbook's content; URI passwords are masked when stored
	Params        map[string]any // read back with JSON types (float64, []any, map[string]any)
	StartedAt     time.Time
	Host          HostFacts
	TargetPath    string // the mongod (or minimongod) binary
	TargetURI     string // how wtd reaches it, if not started by wtd; password masked
	TargetVersion string
	WtdVersion    string
	Trigger       string // what started the run: "cli" (default), "api", "schedule NAME", "catch-up"
	OwnerPID      int    // the process writing the run; 0 means this one
	OwnerHost     string // its host name; "" means this host
	// OwnerStart is, with OwnerPID, when the owner started: clock ticks
	// after boot (/proc/PID/stat field 22); 0 when unknown.
	OwnerStart int64
	// OwnerPIDNS is, with OwnerPID, the owner's pid namespace
	// ("pid:[4026531836]"); "" when unknown.
	OwnerPIDNS string
	// LockPath is the experiment lock file the owner holds while the run
	// goes on: a run whose lock nobody holds is not going on. "": not
	// known; the host's lock is tested instead (see SetHostLock).
	LockPath string
}

// Run is a recorded run.
type Run struct {
	ID int64
	RunInfo
	PlaybookSHA256 string    // hex, of the content as given
	EndedAt        time.Time // zero while running
	Status         string    // running, ok, failed or aborted
	Reason         string    // why it failed or was aborted
}

// createRunOp inserts a run; id is set when it commits.
type createRunOp struct {
	info   RunInfo
	bootID string
	lockID string // the lock file's fileID
	id     int64
}

func (o *createRunOp) describe() string { return "create run" }

func (o *createRunOp) apply(ctx context.Context, w *writer) error {
	in := o.info
	sum := sha256.Sum256([]byte(in.Playbook))
	params, err := marshalRedacted(in.Params)
	if err != nil {
		return fmt.Errorf("encode params: %w", err)
	}
	host, err := marshalRedacted(in.Host)
	if err != nil {
		return fmt.Errorf("encode host facts: %w", err)
	}
	row, err := w.queryRow(ctx, `INSERT INTO runs (playbook_path, playbook, playbook_sha256, params,
		started_at, status, host_facts, target_path, target_uri, target_version, wtd_version,
		owner_pid, owner_host, owner_boot_id, triggered_by, owner_start_ticks, owner_pid_ns, owner_lock, owner_lock_file)
		VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		in.PlaybookPath, RedactURI(in.Playbook), hex.EncodeToString(sum[:]), params,
		in.StartedAt.UnixNano(), host, RedactURI(in.TargetPath), RedactURI(in.TargetURI),
		RedactURI(in.TargetVersion), in.WtdVersion, in.OwnerPID, in.OwnerHost, o.bootID, in.Trigger,
		sql.NullInt64{Int64: in.OwnerStart, Valid: in.OwnerStart != 0}, in.OwnerPIDNS, in.LockPath, o.lockID)
	if err != nil {
		return err
	}
	return row.Scan(&o.id)
}

// CreateRun records the start of a run (status running) and returns its id.
// The run belongs to this process unless info names another owner; with
// this process, its start time and pid namespace are recorded too.
func (s *Store) CreateRun(ctx context.Context, info RunInfo) (int64, error) {
	o := &createRunOp{info: info}
	if o.info.OwnerPID == 0 {
		o.info.OwnerPID, o.info.OwnerStart, o.info.OwnerPIDNS = s.self.PID, s.self.Start, s.self.PIDNS
	}
	if o.info.OwnerHost == "" {
		o.info.OwnerHost = s.self.Host
	}
	if o.info.OwnerHost == s.self.Host {
		o.bootID = s.self.BootID
	}
	if o.info.LockPath != "" {
		abs, err := filepath.Abs(o.info.LockPath)
		if err != nil {
			return 0, fmt.Errorf("create run: lock file %s: %w", o.info.LockPath, err)
		}
		o.info.LockPath, o.lockID = abs, fileID(abs)
	}
	if o.info.StartedAt.IsZero() {
		o.info.StartedAt = time.Now()
	}
	if o.info.Trigger == "" {
		o.info.Trigger = "cli"
	}
	if err := s.do(ctx, o); err != nil {
		return 0, err
	}
	return o.id, nil
}

// finishRunOp ends a run, and any of its steps still running.
type finishRunOp struct {
	id             int64
	status, reason string
	end            time.Time
}

func (o *finishRunOp) describe() string { return fmt.Sprintf("finish run %d", o.id) }

func (o *finishRunOp) apply(ctx context.Context, w *writer) error {
	if err := w.sealRun(ctx, o.id); err != nil {
		return err
	}
	reason := RedactURI(o.reason)
	if err := w.execOne(ctx, `UPDATE runs SET status = ?, reason = ?, ended_at = ? WHERE id = ?`,
		o.status, reason, o.end.UnixNano(), o.id); err != nil {
		return err
	}
	stepErr := reason
	if stepErr == "" {
		stepErr = "run ended " + o.status
	}
	if _, err := w.exec(ctx, `UPDATE steps SET status = 'aborted', error = ?, ended_at = ?
		WHERE run_id = ? AND status = 'running'`, stepErr, o.end.UnixNano(), o.id); err != nil {
		return err
	}
	w.finished = append(w.finished, o.id)
	return nil
}

// FinishRun records the end of a run: status is ok, failed or aborted, reason
// says why when not ok. Steps still running end aborted with the same reason.
func (s *Store) FinishRun(ctx context.Context, id int64, status, reason string, end time.Time) error {
	switch status {
	case StatusOK, StatusFailed, StatusAborted:
	default:
		return fmt.Errorf("finish run %d: status %q is not ok, failed or aborted", id, status)
	}
	if end.IsZero() {
		end = time.Now()
	}
	return s.do(ctx, &finishRunOp{id: id, status: status, reason: reason, end: end})
}

const runColumns = `id, playbook_path, playbook, playbook_sha256, params, started_at, ended_at,
	status, reason, host_facts, target_path, target_uri, target_version, wtd_version,
	owner_pid, owner_host, owner_boot_id, triggered_by, owner_start_ticks, owner_pid_ns, owner_lock, owner_lock_file`

// scanRun reads one row of runColumns, with the status as seen from here
// (see abandoned).
func (s *Store) scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	r, o, err := s.scanRunRow(sc)
	if err != nil {
		return Run{}, err
	}
	if r.Status == StatusRunning {
		if gone, why := s.abandoned(o); gone {
			r.Status, r.Reason = StatusAborted, abandonedReason(r.OwnerPID, why)
		}
	}
	return r, nil
}

// scanRunRow reads one row of runColumns as it is, and who owns the run.
func (s *Store) scanRunRow(sc interface{ Scan(...any) error }) (Run, runOwner, error) {
	var r Run
	var o runOwner
	var params, host []byte
	var started int64
	var ended, ownerStart sql.NullInt64
	if err := sc.Scan(&r.ID, &r.PlaybookPath, &r.Playbook, &r.PlaybookSHA256, &params, &started, &ended,
		&r.Status, &r.Reason, &host, &r.TargetPath, &r.TargetURI, &r.TargetVersion, &r.WtdVersion,
		&r.OwnerPID, &r.OwnerHost, &o.BootID, &r.Trigger, &ownerStart, &r.OwnerPIDNS, &o.lock, &o.lockID); err != nil {
		return Run{}, runOwner{}, err
	}
	r.OwnerStart, r.LockPath = ownerStart.Int64, o.lock
	o.PID, o.Host, o.Start, o.PIDNS = r.OwnerPID, r.OwnerHost, r.OwnerStart, r.OwnerPIDNS
	r.StartedAt = time.Unix(0, started)
	if ended.Valid {
		r.EndedAt = time.Unix(0, ended.Int64)
	}
	if err := decodeJSON(params, &r.Params); err != nil {
		return Run{}, runOwner{}, fmt.Errorf("decode params of run %d: %w", r.ID, err)
	}
	if err := decodeJSON(host, &r.Host); err != nil {
		return Run{}, runOwner{}, fmt.Errorf("decode host facts of run %d: %w", r.ID, err)
	}
	return r, o, nil
}

// GetRun returns run id; an unknown id gives an error wrapping ErrNotFound.
// A run marked running that is not going on (its wtd was killed: see
// abandoned) reads aborted, with the reason.
func (s *Store) GetRun(ctx context.Context, id int64) (Run, error) {
	r, err := s.scanRun(s.r.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("get run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %d: %w", id, err)
	}
	return r, nil
}

// ListRuns returns the newest runs first, at most limit of them (all when
// limit <= 0).
func (s *Store) ListRuns(ctx context.Context, limit int) ([]Run, error) {
	return s.FindRuns(ctx, RunFilter{Limit: limit})
}

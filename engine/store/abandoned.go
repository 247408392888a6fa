package store

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// runOwner is who a runs row says carries the run out.
type runOwner struct {
	Owner
	lock   string // the experiment lock file; "": not recorded (by an older wtd)
	lockID string // that file's fileID when the run started ("" unknown)
}

// SetHostLock names the experiment lock file of this host's state
// directory. It is tested for the runs that did not record their lock file
// (recorded by an older wtd): nobody holding it means they are not going
// on.
func (s *Store) SetHostLock(path string) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s.hostLock.Store(&path)
}

// abandoned reports whether a run marked running is not going on, and why:
// its owner has certainly ended (Owner.gone: gone, a zombie, another
// process with its pid, a reboot), or the experiment lock it holds while it
// runs is free. A run is going on only while its owner is alive and holds
// its lock, as far as each can be checked from here; a run of another
// machine cannot be checked and is never called abandoned.
func (s *Store) abandoned(o runOwner) (bool, string) {
	if gone, why := s.self.gone(o.Owner); gone {
		return true, why
	}
	if same, _ := s.self.sameMachine(o.Owner); !same || s.self.is(o.Owner) {
		return false, ""
	}
	path, id := o.lock, o.lockID
	if path == "" {
		if p := s.hostLock.Load(); p != nil {
			path = *p
		}
	}
	if path == "" {
		return false, ""
	}
	if free, known := lockFree(path, id); known && free {
		return true, fmt.Sprintf("its experiment lock %s is free", path)
	}
	return false, ""
}

// abandonedReason is the reason of a run whose wtd ended while it ran;
// why is the proof.
func abandonedReason(pid int, why string) string {
	return fmt.Sprintf("wtd (pid %d) ended without recording its end: killed or crashed (%s)", pid, why)
}

// EndAbandonedRuns records aborted the runs marked running that are not
// going on (their wtd was killed or crashed: see abandoned), with the
// reason, who found it (by, e.g. "wtd runs") and when. Their running steps
// end aborted with the same reason. When they ended is not known, so their
// end times stay NULL. It returns the runs it recorded aborted.
func (s *Store) EndAbandonedRuns(ctx context.Context, by string) ([]Run, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+runColumns+" FROM runs WHERE status = 'running' ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("find abandoned runs: %w", err)
	}
	found := time.Now()
	var ended []Run
	for rows.Next() {
		r, o, err := s.scanRunRow(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("find abandoned runs: %w", err)
		}
		if gone, why := s.abandoned(o); gone {
			r.Status = StatusAborted
			r.Reason = fmt.Sprintf("%s; found by %s at %s", abandonedReason(r.OwnerPID, why), by, found.Format("2006-01-02 15:04:05"))
			ended = append(ended, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find abandoned runs: %w", err)
	}
	if len(ended) == 0 {
		return nil, nil
	}
	op := &abandonRunsOp{runs: ended}
	if err := s.do(ctx, op); err != nil {
		return nil, err
	}
	return op.ended, nil
}

// abandonRunsOp records runs aborted, unless they ended meanwhile.
type abandonRunsOp struct {
	runs  []Run
	ended []Run // those it recorded
}

func (o *abandonRunsOp) describe() string { return "record abandoned runs aborted" }

func (o *abandonRunsOp) apply(ctx context.Context, w *writer) error {
	o.ended = o.ended[:0]
	for _, r := range o.runs {
		res, err := w.exec(ctx, `UPDATE runs SET status = 'aborted', reason = ? WHERE id = ? AND status = 'running'`, r.Reason, r.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			continue // it recorded its end meanwhile
		}
		if _, err := w.exec(ctx, `UPDATE steps SET status = 'aborted', error = ? WHERE run_id = ? AND status = 'running'`, r.Reason, r.ID); err != nil {
			return err
		}
		o.ended = append(o.ended, r)
	}
	return nil
}

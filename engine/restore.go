package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/engine/mongodconf"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
)

// recordParameter records a runtime change of parameter name on a server
// the run did not start (attached, or a service), before it is made:
// before is the value to set back at the end.
func (s *Server) recordParameter(ctx context.Context, name string, before, value any, keep bool) error {
	enc, err := record.EncodeValue(before)
	if err != nil {
		return fmt.Errorf("setParameter %s: keep the value before the change: %w", name, err)
	}
	change, _ := record.EncodeValue(value)
	info, _ := json.Marshal(restoreInfo{URI: redact(s.uri)})
	if _, err := s.run.cfg.Store.AddChange(ctx, store.Change{RunID: s.run.ID, Server: s.Name, Kind: store.ChangeParameter,
		Target: name, Before: enc, Change: change, Restore: string(info), Keep: keep}); err != nil {
		return fmt.Errorf("setParameter %s: record the change before making it: %w", name, err)
	}
	return nil
}

// restorer puts changes back: clientFor gives a client of a server by its
// record (the run's own, or a new connection after a crash).
type restorer struct {
	st        *store.Store
	clientFor func(ctx context.Context, server string, info restoreInfo) (*mongo.Client, func(), error)
	logf      func(level, server, format string, args ...any)
}

// restore puts back the pending changes that match keep (nil: all):
// runtime parameters and indexes in reverse order (the first change's
// value before is the last set; an index is dropped), then each config
// file once (its original content, with
// the changes made with keep = true applied again) followed by one restart
// through the service manager.
func (rs restorer) restore(ctx context.Context, changes []store.Change, match func(store.Change) bool) error {
	var errs []error
	fail := func(c []int64, server string, err error) {
		errs = append(errs, err)
		rs.logf("error", server, "could not put back: %v (it stays pending: wtd restore RUN tries again)", err)
		if serr := rs.st.SetChangeState(context.WithoutCancel(ctx), c, store.ChangePending, "restore failed: "+err.Error()); serr != nil {
			errs = append(errs, serr)
		}
	}
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		if (c.Kind != store.ChangeParameter && c.Kind != store.ChangeIndex) || c.State != store.ChangePending || (match != nil && !match(c)) {
			continue
		}
		var detail string
		var err error
		if c.Kind == store.ChangeIndex {
			if detail, err = rs.restoreIndex(ctx, c); err != nil {
				err = fmt.Errorf("drop index on %s: %w", c.Target, err)
			}
		} else if err = rs.restoreParameter(ctx, c); err != nil {
			err = fmt.Errorf("setParameter %s back: %w", c.Target, err)
		}
		if err != nil {
			fail([]int64{c.ID}, c.Server, err)
			continue
		}
		if err := rs.st.SetChangeState(ctx, []int64{c.ID}, store.ChangeRestored, detail); err != nil {
			errs = append(errs, err)
		}
	}
	type group struct {
		server, target string
		original       []byte
		kept           [][]mongodconf.Edit
		pending        []int64
		info           restoreInfo
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, c := range changes {
		if c.Kind != store.ChangeConfig {
			continue
		}
		key := c.Server + "\x00" + c.Target
		g := byKey[key]
		if g == nil {
			g = &group{server: c.Server, target: c.Target}
			byKey[key] = g
			groups = append(groups, g)
		}
		if g.original == nil && c.Original != nil {
			g.original = c.Original
		}
		json.Unmarshal([]byte(c.Restore), &g.info)
		switch {
		case c.State == store.ChangeKept:
			var edits []mongodconf.Edit
			json.Unmarshal([]byte(c.Change), &edits)
			g.kept = append(g.kept, edits)
		case c.State == store.ChangePending && (match == nil || match(c)):
			g.pending = append(g.pending, c.ID)
		}
	}
	for _, g := range groups {
		if len(g.pending) == 0 {
			continue
		}
		if err := rs.restoreConfig(ctx, g.server, g.target, g.original, g.kept, g.info); err != nil {
			fail(g.pending, g.server, fmt.Errorf("config %s back: %w", g.target, err))
			continue
		}
		if err := rs.st.SetChangeState(ctx, g.pending, store.ChangeRestored, ""); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (rs restorer) restoreParameter(ctx context.Context, c store.Change) error {
	var info restoreInfo
	json.Unmarshal([]byte(c.Restore), &info)
	before, err := record.DecodeValue(c.Before)
	if err != nil {
		return err
	}
	client, done, err := rs.clientFor(ctx, c.Server, info)
	if err != nil {
		return err
	}
	defer done()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Database("admin").RunCommand(cctx, bson.D{{Key: "setParameter", Value: 1}, {Key: c.Target, Value: before}}).Err(); err != nil {
		return err
	}
	rs.logf("info", c.Server, "put back setParameter %s=%v", c.Target, before)
	return nil
}

func (rs restorer) restoreConfig(ctx context.Context, server, path string, original []byte, kept [][]mongodconf.Edit, info restoreInfo) error {
	if original == nil {
		return errors.New("the original content was not recorded")
	}
	if info.File == nil || len(info.Manager) == 0 || info.Unit == "" {
		return errors.New("the record does not say how to restart the service")
	}
	content := original
	for _, edits := range kept {
		next, err := mongodconf.Apply(content, edits)
		if err != nil {
			return fmt.Errorf("apply a change kept with keep = true: %w", err)
		}
		content = next
	}
	if err := mongodconf.WriteAs(path, content, *info.File); err != nil {
		return err
	}
	how := "the original content"
	if len(kept) > 0 {
		how += fmt.Sprintf(" with the %d changes made with keep = true", len(kept))
	}
	rs.logf("info", server, "put back %s: %s; restarting %s", path, how, info.Unit)
	client, done, err := rs.clientFor(ctx, server, info)
	if err != nil {
		return err
	}
	defer done()
	timeout := time.Duration(info.TimeoutS * float64(time.Second))
	if timeout <= 0 {
		timeout = DefaultServiceTimeout
	}
	if err := managerRestart(ctx, client, info.Manager, info.Unit, timeout); err != nil {
		return err
	}
	rs.logf("info", server, "%s answers again with its original config", info.Unit)
	return nil
}

// RestoreChanges puts back what the run changed and has not put back yet
// (see restorer.restore). Finish calls it; a server that does not come
// back after a change calls it too.
func (r *Run) RestoreChanges(ctx context.Context) error {
	return r.restoreMatching(ctx, nil)
}

func (r *Run) restoreMatching(ctx context.Context, match func(store.Change) bool) error {
	changes, err := r.cfg.Store.Changes(ctx, r.ID)
	if err != nil || len(changes) == 0 {
		return err
	}
	rs := restorer{st: r.cfg.Store, logf: r.Eventf, clientFor: func(ctx context.Context, name string, info restoreInfo) (*mongo.Client, func(), error) {
		for _, s := range r.Servers() {
			if s.Name == name {
				return s.restoreClient(ctx)
			}
		}
		return nil, nil, fmt.Errorf("no server %s in run %d", name, r.ID)
	}}
	return rs.restore(ctx, changes, match)
}

// restoreClient is a client to put back what the run changed on s: its
// own, or, for an attached server the playbook stopped (m:stop only
// disconnects), a new connection.
func (s *Server) restoreClient(ctx context.Context) (*mongo.Client, func(), error) {
	s.mu.Lock()
	stopped := s.hs == nil && s.svc == nil && s.down
	s.mu.Unlock()
	if !stopped {
		return s.Client(), func() {}, nil
	}
	client, err := s.run.connectDirect(ctx, s.uri, 0)
	if err != nil {
		return nil, nil, err
	}
	return client, func() { client.Disconnect(context.WithoutCancel(ctx)) }, nil
}

// RestoreRun puts back the pending changes of a run whose wtd ended
// without doing it (killed), connecting to the servers by the URIs
// recorded. What it does is recorded as the run's events and written to
// log.
func RestoreRun(ctx context.Context, st *store.Store, runID int64, log io.Writer) error {
	changes, err := st.Changes(ctx, runID)
	if err != nil {
		return err
	}
	rs := restorer{st: st, logf: func(level, server, format string, args ...any) {
		msg := redact(fmt.Sprintf(format, args...))
		st.AddEvent(runID, time.Now(), level, server, "restore: "+msg, nil)
		if log != nil {
			fmt.Fprintf(log, "wtd: run %d %s: %s\n", runID, server, msg)
		}
	}, clientFor: func(ctx context.Context, name string, info restoreInfo) (*mongo.Client, func(), error) {
		if info.URI != "" && hasPassword(info.URI) {
			return nil, nil, fmt.Errorf("server %s: its URI was recorded with the password masked; put it back by hand", name)
		}
		// No ping: a server the killed run left down must still be
		// restarted; the restore waits for it to answer.
		opts, err := hostctl.ClientOptions(info.URI, hostctl.ConnectOptions{Timeout: 10 * time.Second})
		if err != nil {
			return nil, nil, err
		}
		client, err := mongo.Connect(opts)
		if err != nil {
			return nil, nil, err
		}
		return client, func() { client.Disconnect(context.WithoutCancel(ctx)) }, nil
	}}
	err = rs.restore(ctx, changes, nil)
	if ferr := st.Flush(ctx); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// RestoreUnrestored records aborted the runs whose wtd ended without
// recording their end (killed or crashed: store.EndAbandonedRuns, by names
// who found them, e.g. "wtd runs"), then puts back the changes of every run
// whose wtd ended without putting them back (see RestoreRun), but for the
// runs skip; every wtd command that opens the results database and the
// daemon at start call it.
func RestoreUnrestored(ctx context.Context, st *store.Store, by string, log io.Writer, skip ...int64) error {
	var errs []error
	ended, err := st.EndAbandonedRuns(ctx, by)
	if err != nil {
		errs = append(errs, err) // what was changed is put back all the same
	}
	for _, r := range ended {
		if log != nil {
			fmt.Fprintf(log, "wtd: run %d recorded aborted: %s\n", r.ID, r.Reason)
		}
	}
	ids, err := st.UnrestoredRuns(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range ids {
		if slices.Contains(skip, id) {
			continue
		}
		if log != nil {
			fmt.Fprintf(log, "wtd: run %d ended without putting back what it changed: putting it back now\n", id)
		}
		if err := RestoreRun(ctx, st, id, log); err != nil {
			errs = append(errs, fmt.Errorf("run %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// hasPassword reports whether a URI carries a password (recorded masked).
func hasPassword(uri string) bool {
	rest, ok := strings.CutPrefix(uri, "mongodb://")
	if !ok {
		return false
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	return at >= 0 && strings.Contains(rest[:at], ":")
}

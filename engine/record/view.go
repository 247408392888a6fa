package record

import (
	"context"
	"encoding/json"
	"time"

	"wtd/engine/store"
)

// View is the JSON document of a run: what wtd show --json and GET
// /api/v1/runs/{id} print (docs/json.md). Every key is always there; a
// value that was not recorded, or not measured, is null. Times are RFC
// 3339 in UTC; offsets and durations are seconds.
type View struct {
	Run     Run      `json:"run"`
	Servers []Server `json:"servers"`
	Changes []Change `json:"changes"`
	Files   []File   `json:"files"`
	Samples Samples  `json:"samples"`
	Steps   []Step   `json:"steps"`
	Output  []Output `json:"output"`
	Tables  []Table  `json:"tables"`
	// Tunings are the run's tune{} searches: their trials and verdicts.
	Tunings []Tuning `json:"tunings"`
	// Thresholds are the playbook's thresholds as they held at the end
	// (empty while the run goes on, and when it declared none).
	Thresholds []store.Threshold `json:"thresholds"`
}

// Run is the header of a run: what wtd runs --json and GET /api/v1/runs
// list. EndedAt and DurationS are null while the run goes on: a record
// states what happened, not how long it has gone so far.
type Run struct {
	ID             int64           `json:"id"`
	Playbook       string          `json:"playbook"`
	PlaybookSHA256 string          `json:"playbook_sha256"`
	Status         string          `json:"status"`
	Reason         *string         `json:"reason"` // why it failed or was aborted
	Trigger        string          `json:"trigger"`
	StartedAt      time.Time       `json:"started_at"`
	EndedAt        *time.Time      `json:"ended_at"`
	DurationS      *float64        `json:"duration_s"`
	Params         map[string]any  `json:"params"`
	Host           store.HostFacts `json:"host"`
	Target         *string         `json:"target"`         // the mongod binary given with --mongod
	TargetURI      *string         `json:"target_uri"`     // the server given with --uri
	TargetVersion  *string         `json:"target_version"` // its version
	WtdVersion     string          `json:"wtd_version"`
	OwnerPID       int             `json:"owner_pid"` // the process that carried it out
	// Verdict is the regression verdict the daemon recorded (a
	// compare.RunVerdict); null when none was.
	Verdict json.RawMessage `json:"verdict"`
	// Push is the run's state in the outbox of the central results store;
	// null when it was never queued (no results store configured).
	Push *Push `json:"push"`
}

// Push is a run's push to the central results store.
type Push struct {
	Waiting   bool       `json:"waiting"` // not acknowledged yet
	QueuedAt  time.Time  `json:"queued_at"`
	Attempts  int        `json:"attempts"`   // failed attempts since it was queued
	NextAt    *time.Time `json:"next_at"`    // the next attempt; null once pushed
	LastError *string    `json:"last_error"` // the last attempt's error; null none
	PushedAt  *time.Time `json:"pushed_at"`
	Dest      *string    `json:"dest"` // the results store it went to (no password)
}

// PushOf is the push state of p; nil when p is nil.
func PushOf(p *store.Push) *Push {
	if p == nil {
		return nil
	}
	out := &Push{Waiting: p.Waiting(), QueuedAt: p.QueuedAt.UTC(), Attempts: p.Attempts, LastError: optText(p.LastError),
		PushedAt: at(p.PushedAt), Dest: optText(p.Dest)}
	if p.Waiting() {
		out.NextAt = at(p.NextAt)
	}
	return out
}

// Server is a server the run started or attached to.
type Server struct {
	Name       string `json:"name"`
	Started    bool   `json:"started"`
	URI        string `json:"uri"`
	Binary     string `json:"binary"`
	Version    string `json:"version"`
	GitVersion string `json:"git_version"`
	PID        *int   `json:"pid"` // null when attached
}

// Change is what a run changed on a server it did not start.
type Change struct {
	Server string  `json:"server"`
	Kind   string  `json:"kind"`   // config, parameter, index or command
	Target string  `json:"target"` // the config file, the parameter, the index's db.collection, the command
	Before *string `json:"before"`
	Change string  `json:"change"`
	Keep   bool    `json:"keep"`
	State  string  `json:"state"` // pending, restored, kept, irreversible
	// Restorable is false for a change wtd cannot put back (a command
	// the operator allowed m:command to run).
	Restorable bool       `json:"restorable"`
	What       string     `json:"what"` // the change in words, as wtd show prints it
	MadeAt     time.Time  `json:"made_at"`
	RestoredAt *time.Time `json:"restored_at"`
	Detail     *string    `json:"detail"`
}

// File is a file the run kept.
type File struct {
	Path string  `json:"path"`
	Size int64   `json:"size"`
	Note *string `json:"note"`
}

// Samples says how many samples the run recorded, and of what.
type Samples struct {
	Count   int64    `json:"count"`
	Sources []string `json:"sources"`
}

// Step is a step of the run.
type Step struct {
	Seq              int            `json:"seq"`
	Name             string         `json:"name"`
	Labels           map[string]any `json:"labels"`
	Status           string         `json:"status"`
	Error            *string        `json:"error"`
	StartedAt        time.Time      `json:"started_at"`
	EndedAt          *time.Time     `json:"ended_at"`
	StartOffsetS     float64        `json:"start_offset_s"`
	DurationS        *float64       `json:"duration_s"`
	Settings         *Settings      `json:"settings"`
	Provenance       *Provenance    `json:"provenance"`
	ProvenanceFields []Field        `json:"provenance_fields"`
	Result           any            `json:"result"`
	Server           *ServerDeltas  `json:"server"`
	HostLoad         *HostLoad      `json:"host_load"`
	ServerSeconds    *ServerSeconds `json:"server_seconds,omitempty"`
}

// Output is a line of the run's output: what the playbook printed or
// logged, and wtd's events.
type Output struct {
	OffsetS float64        `json:"offset_s"`
	Time    time.Time      `json:"time"`
	Level   string         `json:"level"`
	Source  string         `json:"source"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs"`
}

// Table is a report.table the playbook printed.
type Table struct {
	OffsetS float64 `json:"offset_s"`
	Title   string  `json:"title"`
	By      string  `json:"by"`
	Steps   []int   `json:"steps"` // the step numbers it showed
	Text    string  `json:"text"`  // the table redrawn
}

// RunOf is the header of run r, with its recorded verdict (nil: none).
func RunOf(r store.Run, verdict json.RawMessage) Run {
	return Run{ID: r.ID, Playbook: r.PlaybookPath, PlaybookSHA256: r.PlaybookSHA256, Status: r.Status, Reason: optText(r.Reason),
		Trigger: r.Trigger, StartedAt: r.StartedAt.UTC(), EndedAt: at(r.EndedAt), DurationS: seconds(r.StartedAt, r.EndedAt),
		Params: r.Params, Host: r.Host, Target: optText(r.TargetPath), TargetURI: optText(r.TargetURI), TargetVersion: optText(r.TargetVersion),
		WtdVersion: r.WtdVersion, OwnerPID: r.OwnerPID, Verdict: verdict}
}

// Runs are the headers of runs, each with its recorded verdict.
func Runs(ctx context.Context, st *store.Store, runs []store.Run) ([]Run, error) {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	vs, err := Verdicts(ctx, st, ids...)
	if err != nil {
		return nil, err
	}
	pushes, err := st.Pushes(ctx, ids...)
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(runs))
	for _, r := range runs {
		run := RunOf(r, vs[r.ID])
		if p, ok := pushes[r.ID]; ok {
			run.Push = PushOf(&p)
		}
		out = append(out, run)
	}
	return out, nil
}

// View is the JSON document of the run.
func (rec *Record) View() View {
	r := rec.Run
	v := View{Run: RunOf(r, rec.Verdict), Servers: []Server{}, Changes: []Change{}, Files: []File{}, Steps: []Step{},
		Output: []Output{}, Tables: []Table{}, Tunings: []Tuning{}, Thresholds: []store.Threshold{}, Samples: Samples{Count: rec.Samples, Sources: rec.Sources}}
	v.Run.Push = PushOf(rec.Push)
	if v.Samples.Sources == nil {
		v.Samples.Sources = []string{}
	}
	for _, s := range rec.Servers {
		sv := Server{Name: s.Name, Started: s.Started, URI: s.URI, Binary: s.Binary, Version: s.Version, GitVersion: s.GitVersion}
		if s.PID > 0 {
			pid := s.PID
			sv.PID = &pid
		}
		v.Servers = append(v.Servers, sv)
	}
	for _, c := range rec.Changes {
		v.Changes = append(v.Changes, Change{Server: c.Server, Kind: c.Kind, Target: c.Target, Before: optText(c.Before), Change: c.Change,
			Keep: c.Keep, State: c.State, Restorable: c.State != store.ChangeIrreversible, What: ChangeWhat(c),
			MadeAt: c.MadeAt.UTC(), RestoredAt: at(c.RestoredAt), Detail: optText(c.Detail)})
	}
	v.Thresholds = append(v.Thresholds, rec.Thresholds...)
	for _, f := range rec.Files {
		v.Files = append(v.Files, File{Path: f.Path, Size: f.Size, Note: optText(f.Note)})
	}
	for _, s := range rec.Steps {
		v.Steps = append(v.Steps, Step{Seq: s.Seq, Name: s.Name, Labels: s.Labels, Status: s.Status, Error: optText(s.Error),
			StartedAt: s.Start.UTC(), EndedAt: at(s.End), StartOffsetS: s.Start.Sub(r.StartedAt).Seconds(),
			DurationS: seconds(s.Start, s.End), Settings: s.Settings, Provenance: s.Provenance, ProvenanceFields: rec.Fields(s),
			Result: s.Result, Server: s.Server, HostLoad: s.Host, ServerSeconds: s.ServerSeconds})
	}
	for _, ev := range rec.Events {
		v.Output = append(v.Output, Output{OffsetS: ev.TS.Sub(r.StartedAt).Seconds(), Time: ev.TS.UTC(), Level: ev.Level,
			Source: ev.Source, Message: ev.Message, Attrs: ev.Attrs})
	}
	v.Tunings = append(v.Tunings, rec.Tunings()...)
	for _, t := range rec.Tables() {
		tv := Table{OffsetS: t.At.Sub(r.StartedAt).Seconds(), Title: t.Options.Title, By: t.Options.By, Steps: []int{}, Text: t.Text()}
		for _, s := range t.Steps {
			tv.Steps = append(tv.Steps, s.Seq)
		}
		v.Tables = append(v.Tables, tv)
	}
	return v
}

// seconds is how long from start to end took; nil when it has not ended.
func seconds(start, end time.Time) *float64 {
	if end.IsZero() {
		return nil
	}
	s := end.Sub(start).Seconds()
	return &s
}

// at is t in UTC; nil for the zero time (not happened).
func at(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// text is s; nil when empty (not recorded).
func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

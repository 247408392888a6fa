package main

import (
	"time"

	"wtd/engine"
	"wtd/engine/store"
)

// The JSON document of wtd show --json (documented in the README). Times
// are RFC 3339; offsets and durations are seconds; a figure that was not
// measured is null.
type showDoc struct {
	Run     runDoc      `json:"run"`
	Servers []serverDoc `json:"servers"`
	Changes []changeDoc `json:"changes"`
	Files   []fileDoc   `json:"files"`
	Samples samplesDoc  `json:"samples"`
	Steps   []stepDoc   `json:"steps"`
	Output  []outputDoc `json:"output"`
	Tables  []tableDoc  `json:"tables"`
}

type runDoc struct {
	ID             int64          `json:"id"`
	Playbook       string         `json:"playbook"`
	PlaybookSHA256 string         `json:"playbook_sha256"`
	Status         string         `json:"status"`
	Reason         string         `json:"reason"`
	Trigger        string         `json:"trigger"`
	StartedAt      time.Time      `json:"started_at"`
	EndedAt        *time.Time     `json:"ended_at"`
	DurationS      *float64       `json:"duration_s"`
	Params         map[string]any `json:"params"`
	Host           any            `json:"host"`
	WtdVersion     string         `json:"wtd_version"`
}

// changeDoc is what a run changed on a server it did not start.
type changeDoc struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`   // config, parameter, index or command
	Target string `json:"target"` // the config file, the parameter, the index's db.collection, the command
	Before string `json:"before,omitempty"`
	Change string `json:"change"`
	Keep   bool   `json:"keep"`
	State  string `json:"state"` // pending, restored, kept, irreversible
	// Restorable is false for a change wtd cannot put back (a command
	// the operator allowed m:command to run).
	Restorable bool       `json:"restorable"`
	What       string     `json:"what"` // the change in words, as wtd show prints it
	MadeAt     time.Time  `json:"made_at"`
	RestoredAt *time.Time `json:"restored_at"`
	Detail     string     `json:"detail,omitempty"`
}

type serverDoc struct {
	Name       string `json:"name"`
	Started    bool   `json:"started"`
	URI        string `json:"uri"`
	Binary     string `json:"binary"`
	Version    string `json:"version"`
	GitVersion string `json:"git_version"`
	PID        *int   `json:"pid"`
}

type fileDoc struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	Note string `json:"note,omitempty"`
}

type samplesDoc struct {
	Count   int64    `json:"count"`
	Sources []string `json:"sources"`
}

type stepDoc struct {
	Seq              int                  `json:"seq"`
	Name             string               `json:"name"`
	Labels           map[string]any       `json:"labels"`
	Status           string               `json:"status"`
	Error            string               `json:"error"`
	StartOffsetS     float64              `json:"start_offset_s"`
	DurationS        *float64             `json:"duration_s"`
	Settings         *engine.Settings     `json:"settings"`
	Provenance       *engine.Provenance   `json:"provenance"`
	ProvenanceFields []engine.Field       `json:"provenance_fields"`
	Result           any                  `json:"result"`
	Server           *engine.ServerDeltas `json:"server"`
}

type outputDoc struct {
	OffsetS float64        `json:"offset_s"`
	Time    time.Time      `json:"time"`
	Level   string         `json:"level"`
	Source  string         `json:"source"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

type tableDoc struct {
	OffsetS float64 `json:"offset_s"`
	Title   string  `json:"title"`
	By      string  `json:"by"`
	Steps   []int   `json:"steps"`
	Text    string  `json:"text"`
}

func secondsPtr(start, end time.Time) *float64 {
	if end.IsZero() {
		return nil
	}
	s := end.Sub(start).Seconds()
	return &s
}

// runDocOf is the JSON of a run.
func runDocOf(r store.Run) runDoc {
	d := runDoc{ID: r.ID, Playbook: r.PlaybookPath, PlaybookSHA256: r.PlaybookSHA256, Status: r.Status, Reason: r.Reason,
		Trigger: r.Trigger, StartedAt: r.StartedAt.UTC(), DurationS: secondsPtr(r.StartedAt, r.EndedAt),
		Params: r.Params, Host: r.Host, WtdVersion: r.WtdVersion}
	if !r.EndedAt.IsZero() {
		t := r.EndedAt.UTC()
		d.EndedAt = &t
	}
	return d
}

func showDocument(rec *engine.RunRecord) showDoc {
	r := rec.Run
	d := showDoc{Run: runDocOf(r), Servers: []serverDoc{}, Changes: []changeDoc{}, Files: []fileDoc{}, Steps: []stepDoc{}, Output: []outputDoc{},
		Tables: []tableDoc{}, Samples: samplesDoc{Count: rec.Samples, Sources: rec.Sources}}
	if d.Samples.Sources == nil {
		d.Samples.Sources = []string{}
	}
	for _, s := range rec.Servers {
		sd := serverDoc{Name: s.Name, Started: s.Started, URI: s.URI, Binary: s.Binary, Version: s.Version, GitVersion: s.GitVersion}
		if s.PID > 0 {
			pid := s.PID
			sd.PID = &pid
		}
		d.Servers = append(d.Servers, sd)
	}
	for _, c := range rec.Changes {
		cd := changeDoc{Server: c.Server, Kind: c.Kind, Target: c.Target, Before: c.Before, Change: c.Change, Keep: c.Keep,
			State: c.State, Restorable: c.State != store.ChangeIrreversible, What: engine.ChangeWhat(c), MadeAt: c.MadeAt, Detail: c.Detail}
		if !c.RestoredAt.IsZero() {
			at := c.RestoredAt
			cd.RestoredAt = &at
		}
		d.Changes = append(d.Changes, cd)
	}
	for _, f := range rec.Files {
		d.Files = append(d.Files, fileDoc{Path: f.Path, Size: f.Size, Note: f.Note})
	}
	for _, s := range rec.Steps {
		d.Steps = append(d.Steps, stepDoc{Seq: s.Seq, Name: s.Name, Labels: s.Labels, Status: s.Status, Error: s.Error,
			StartOffsetS: s.Start.Sub(r.StartedAt).Seconds(), DurationS: secondsPtr(s.Start, s.End), Settings: s.Settings,
			Provenance: s.Provenance, ProvenanceFields: rec.Fields(s), Result: s.Result, Server: s.Server})
	}
	for _, ev := range rec.Events {
		d.Output = append(d.Output, outputDoc{OffsetS: ev.TS.Sub(r.StartedAt).Seconds(), Time: ev.TS.UTC(), Level: ev.Level,
			Source: ev.Source, Message: ev.Message, Attrs: ev.Attrs})
	}
	for _, t := range rec.Tables() {
		td := tableDoc{OffsetS: t.At.Sub(r.StartedAt).Seconds(), Title: t.Options.Title, By: t.Options.By, Steps: []int{}}
		for _, s := range t.Steps {
			td.Steps = append(td.Steps, s.Seq)
		}
		td.Text = t.Text()
		d.Tables = append(d.Tables, td)
	}
	return d
}

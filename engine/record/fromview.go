package record

import (
	"time"

	"wtd/engine/store"
)

// FromView is the Record a run's View describes: what compare and history
// read of a run kept elsewhere in its one shape (a run of the central
// results store). It holds the run, its servers, steps (with their
// results and per-second series), changes, files' metadata, samples'
// count and sources and thresholds; not the events (View's output holds
// them as lines) nor the push state.
func FromView(v View) *Record {
	r := v.Run
	run := store.Run{ID: r.ID, PlaybookSHA256: r.PlaybookSHA256, Status: r.Status, Reason: textOf(r.Reason),
		RunInfo: store.RunInfo{PlaybookPath: r.Playbook, Params: r.Params, StartedAt: r.StartedAt, Host: r.Host,
			TargetPath: textOf(r.Target), TargetURI: textOf(r.TargetURI), TargetVersion: textOf(r.TargetVersion),
			WtdVersion: r.WtdVersion, Trigger: r.Trigger, OwnerPID: r.OwnerPID}}
	if r.EndedAt != nil {
		run.EndedAt = *r.EndedAt
	}
	rec := &Record{Run: run, Samples: v.Samples.Count, Sources: v.Samples.Sources, SwapChange: map[int]float64{},
		Thresholds: v.Thresholds}
	if len(r.Verdict) > 0 && string(r.Verdict) != "null" {
		rec.Verdict = r.Verdict
	}
	for _, s := range v.Servers {
		sr := store.ServerRecord{Name: s.Name, Started: s.Started, URI: s.URI, Binary: s.Binary, Version: s.Version, GitVersion: s.GitVersion}
		if s.PID != nil {
			sr.PID = *s.PID
		}
		rec.Servers = append(rec.Servers, sr)
	}
	for _, c := range v.Changes {
		sc := store.Change{Server: c.Server, Kind: c.Kind, Target: c.Target, Before: textOf(c.Before), Change: c.Change,
			Keep: c.Keep, State: c.State, MadeAt: c.MadeAt, Detail: textOf(c.Detail)}
		if c.RestoredAt != nil {
			sc.RestoredAt = *c.RestoredAt
		}
		rec.Changes = append(rec.Changes, sc)
	}
	for _, f := range v.Files {
		rec.Files = append(rec.Files, store.Artifact{Path: f.Path, Size: f.Size, Note: textOf(f.Note)})
	}
	for _, s := range v.Steps {
		end := time.Time{}
		if s.EndedAt != nil {
			end = *s.EndedAt
		}
		rec.Steps = append(rec.Steps, StepRecord{Seq: s.Seq, Name: s.Name, Labels: s.Labels, Start: s.StartedAt, End: end,
			Status: s.Status, Error: textOf(s.Error), Settings: s.Settings, Provenance: s.Provenance, Result: s.Result,
			Server: s.Server, Host: s.HostLoad, ServerSeconds: s.ServerSeconds})
	}
	return rec
}

// textOf is *s; "" for nil (not recorded).
func textOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

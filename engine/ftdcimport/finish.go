package ftdcimport

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
)

// finish records each process's steps and end, and the files read.
func (im *importer) finish() error {
	var prev = map[string]*process{} // the host's process before, for what changed
	for _, p := range im.procs {
		name, labels := "process", map[string]any(nil)
		if before := prev[p.host]; before != nil {
			// A restart that changed nothing keeps the step's title, so
			// that compare and history match it across processes.
			what, did := changed(before, p)
			if did {
				labels = map[string]any{record.ChangedLabel: what}
			}
			im.st.AddEvent(p.res.Run, time.UnixMilli(p.firstTS), "info", "import",
				fmt.Sprintf("server %s restarted (pid %d -> %d): %s", p.host, before.pid, p.pid, what), nil)
		}
		prev[p.host] = p
		for i, s := range p.stretches {
			if i > 0 {
				labels = map[string]any{record.ChangedLabel: s.changed}
			}
			if s.t.before == nil {
				continue
			}
			if err := im.step(s.t, s.settings, p, name, labels); err != nil {
				return err
			}
		}
		for i, w := range p.windows {
			if w.before == nil {
				continue
			}
			if err := im.step(w, p.stretchAt(w.firstTS).settings, p, im.opt.Windows[i].Name, nil); err != nil {
				return err
			}
		}
		if err := im.st.FinishRun(im.ctx, p.res.Run, store.StatusOK, "", time.UnixMilli(p.lastTS)); err != nil {
			return err
		}
		p.res.First, p.res.Last = time.UnixMilli(p.firstTS).UTC(), time.UnixMilli(p.lastTS).UTC()
		if p.res.Skipped == nil {
			p.res.Skipped = []string{}
		}
		im.rep.Runs = append(im.rep.Runs, *p.res)
	}
	for i, w := range im.opt.Windows {
		found := false
		for _, p := range im.procs {
			found = found || p.windows[i].before != nil
		}
		if !found {
			im.rep.Unmatched = append(im.rep.Unmatched, w.Name)
		}
	}
	im.rep.Skipped = append(im.rep.Skipped, im.pend...)
	for _, fs := range im.files {
		if fs.known || len(fs.runs) == 0 {
			continue
		}
		runs := slices.Sorted(maps.Keys(fs.runs))
		if err := im.st.RecordImportedFile(im.ctx, store.ImportedFile{SHA256: fs.sha, Path: im.shown(fs.path), Bytes: fs.bytes, Runs: runs}); err != nil {
			return err
		}
	}
	return nil
}

// abort ends the runs made so far as failed.
func (im *importer) abort(err error) {
	for _, p := range im.procs {
		_ = im.st.FinishRun(im.ctx, p.res.Run, store.StatusFailed, "import: "+err.Error(), time.Time{})
	}
}

// step records one imported step: its settings as the metadata says, the
// server deltas over its samples, and a provenance that knows the cache
// size and memory but not what happened to the caches.
func (im *importer) step(t *tracker, set *record.Settings, p *process, name string, labels map[string]any) error {
	settings, err := json.Marshal(set)
	if err != nil {
		return err
	}
	prov := &record.Provenance{Verdict: record.VerdictUnknown, Reason: ImportedReason,
		Warmup: "unknown", Cleared: "unknown", MemoryBytes: p.memBytes}
	if v, ok := t.after[engine.CacheMetric("maximum bytes configured")]; ok {
		n := int64(v)
		prov.CacheBytes = &n
	}
	provJSON, err := json.Marshal(prov)
	if err != nil {
		return err
	}
	id, err := im.st.CreateStep(im.ctx, store.StepInfo{RunID: p.res.Run, Name: name, Labels: labels,
		StartedAt: time.UnixMilli(t.firstTS), Settings: settings, Provenance: provJSON})
	if err != nil {
		return err
	}
	res := map[string]any{"server": engine.ServerDeltasOf(t.before, t.after, t.peaks)}
	if secs := t.secs.result(); secs != nil {
		res["server_seconds"] = secs
	}
	results, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return im.st.FinishStep(im.ctx, id, store.StepResult{Status: store.StatusOK, EndedAt: time.UnixMilli(t.lastTS), Results: results})
}

// changed says what differs between two processes of one server: version,
// cache size, engine configuration, parameters set on the command line;
// changed is false when nothing did.
func changed(a, b *process) (what string, changed bool) {
	var out []string
	if a.res.Version != b.res.Version {
		out = append(out, "version="+b.res.Version)
	}
	if a.meta == nil || b.meta == nil {
		// Without both command lines, nothing is known to have changed.
		if len(out) == 0 {
			return "the command line of one of them is not in the files", false
		}
		return strings.Join(out, ","), true
	}
	sa, sb := a.settings, b.settings
	if sa.CacheSizeGB != sb.CacheSizeGB {
		out = append(out, "cacheSizeGB="+strconv.FormatFloat(sb.CacheSizeGB, 'g', -1, 64))
	}
	if sa.EngineConfig != sb.EngineConfig {
		out = append(out, "engineConfig="+sb.EngineConfig)
	}
	for _, k := range slices.Sorted(maps.Keys(sb.SetParameters)) {
		if sa.SetParameters[k] != sb.SetParameters[k] {
			out = append(out, k+"="+sb.SetParameters[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sa.SetParameters)) {
		if _, ok := sb.SetParameters[k]; !ok {
			out = append(out, k+" unset")
		}
	}
	if len(out) == 0 {
		return "nothing changed", false
	}
	return strings.Join(out, ","), true
}

// stretchAt returns the stretch sample time ts (ms) fell in.
func (p *process) stretchAt(ts int64) *stretch {
	at := p.stretches[0]
	for _, s := range p.stretches {
		if s.t.before != nil && s.t.firstTS <= ts {
			at = s
		}
	}
	return at
}

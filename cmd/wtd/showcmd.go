package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/fleet"
)

func newShowCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var asJSON bool
	var rf resultsFlags
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run: parameters, servers, steps, provenance, results and its output",
		Long: `Show prints everything recorded about a run: its parameters (once), the servers
it started or attached to, the host, the files it kept; every step with its
start (offset from the run's start) and duration, the server settings in force,
the cache-state provenance (the eight figures a measured result must state and
the cold/hot verdict), and the results; then the run's output in time order:
what the playbook printed, its log() lines, wtd's own events, and the tables
report.table printed, redrawn from the recorded steps.

` + runArgHelp + `

--json prints the same as one JSON document, the one GET /api/v1/runs/{id}
answers (its keys are in docs/json.md).

With --results URI, RUN is a run of the central results store (see "Many
hosts" in the README): HOST:RUN (a host id or name, and its run id) or the
run's UUID; --json prints its document as its host did when it pushed it,
and the text its header and steps.`,
		Example: `  wtd show latest
  wtd show latest:cache_sweep
  wtd show 12 --json | jq '.steps[] | {name, duration_s}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, central, err := rf.readConfig(env, args)
			if err != nil {
				return err
			}
			if central {
				return showCentralRun(ctx, env, cfg, args[0], asJSON)
			}
			return withStore(ctx, openStore, func(st *store.Store) error {
				id, err := resolveRun(ctx, st, args[0])
				if err != nil {
					return err
				}
				rec, err := record.Load(ctx, st, id)
				if err != nil {
					return failed(err)
				}
				if asJSON {
					return printJSON(env.Stdout, rec.View())
				}
				showRun(termWriter{env.Stdout}, rec)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	rf.add(cmd, "show a run of this central results store (RUN is HOST:RUN or its UUID)")
	return cmd
}

// showCentralRun prints run ref of the central results store.
func showCentralRun(ctx context.Context, env Env, cfg fleet.Config, ref string, asJSON bool) error {
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		return failed(err)
	}
	defer sink.Close(context.WithoutCancel(ctx))
	r, err := sink.Find(ctx, ref)
	if errors.Is(err, fleet.ErrNoRun) {
		return usageErr("%v (see wtd runs --results)", err)
	}
	if err != nil {
		return failed(err)
	}
	v, err := sink.View(ctx, r)
	if err != nil {
		return failed(err)
	}
	if asJSON {
		return printJSON(env.Stdout, v)
	}
	w := termWriter{env.Stdout}
	run := v.Run
	end := time.Time{}
	if run.EndedAt != nil {
		end = *run.EndedAt
	}
	fmt.Fprintf(w, "run %s  %s  %s\n", r.Key, run.Status, termLine(run.Playbook))
	fmt.Fprintf(w, "  host:      %s (id %s), %s\n", orDash(termLine(r.Host)), r.HostID, record.HostShort(run.Host))
	fmt.Fprintf(w, "  uuid:      %s\n", r.UUID)
	fmt.Fprintf(w, "  started:   %s (%s)\n", run.StartedAt.Format(time.RFC3339), duration(run.StartedAt, end))
	if run.Reason != nil {
		fmt.Fprintf(w, "  reason:    %s\n", termLine(*run.Reason))
	}
	fmt.Fprintf(w, "  trigger:   %s\n", run.Trigger)
	fmt.Fprintf(w, "  params:    %s\n", orDash(termLine(record.ParamsShort(run.Params))))
	fmt.Fprintf(w, "  wtd:       %s\n", run.WtdVersion)
	fmt.Fprintf(w, "  samples:   %d (%s)\n", v.Samples.Count, strings.Join(v.Samples.Sources, ", "))
	if len(v.Steps) > 0 {
		fmt.Fprintf(w, "\nsteps (start is the offset from the run's start)\n")
		fmt.Fprintf(w, "  %3s  %-44s  %-8s  %9s  %9s\n", "seq", "step", "status", "start", "duration")
		for _, s := range v.Steps {
			d := "-"
			if s.DurationS != nil {
				d = (time.Duration(*s.DurationS * float64(time.Second))).Round(100 * time.Millisecond).String()
			}
			fmt.Fprintf(w, "  %3d  %-44s  %-8s  %9s  %9s\n", s.Seq, clip(termLine(stepTitle(s)), 44), s.Status,
				fmt.Sprintf("+%.2fs", s.StartOffsetS), d)
		}
	}
	return nil
}

// stepTitle is a step's name with its labels, as wtd show lists steps.
func stepTitle(s record.Step) string {
	if len(s.Labels) == 0 {
		return s.Name
	}
	return s.Name + " (" + record.ParamsShort(s.Labels) + ")"
}

func duration(start, end time.Time) string {
	if end.IsZero() {
		return "-"
	}
	return end.Sub(start).Round(100 * time.Millisecond).String()
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

func showRun(w io.Writer, rec *record.Record) {
	r := rec.Run
	fmt.Fprintf(w, "run %d  %s  %s\n", r.ID, r.Status, termLine(r.PlaybookPath))
	if r.Reason != "" {
		fmt.Fprintf(w, "  reason:    %s\n", r.Reason)
	}
	fmt.Fprintf(w, "  started:   %s (%s)\n", r.StartedAt.Local().Format(time.RFC3339), duration(r.StartedAt, r.EndedAt))
	fmt.Fprintf(w, "  trigger:   %s\n", r.Trigger)
	fmt.Fprintf(w, "  params:    %s\n", orDash(termLine(record.ParamsShort(r.Params))))
	fmt.Fprintf(w, "  playbook:  sha256 %s\n", r.PlaybookSHA256)
	showServers(w, rec.Servers)
	for i, c := range rec.Changes {
		label := ""
		if i == 0 {
			label = "changed:"
		}
		fmt.Fprintf(w, "  %-10s %s\n", label, describeChange(c))
	}
	fmt.Fprintf(w, "  host:      %s\n", record.HostShort(r.Host))
	fmt.Fprintf(w, "  wtd:       %s\n", r.WtdVersion)
	showArtifacts(w, rec.Files)
	fmt.Fprintf(w, "  samples:   %d (%s)\n", rec.Samples, strings.Join(rec.Sources, ", "))
	if p := rec.Push; p != nil {
		fmt.Fprintf(w, "  pushed:    %s\n", pushLine(*p))
	}
	for i, t := range rec.Thresholds {
		label := ""
		if i == 0 {
			label = "threshold:"
		}
		fmt.Fprintf(w, "  %-10s %-11s %s\n", label, t.State, termLine(t.Reason))
	}

	if len(rec.Steps) > 0 {
		fmt.Fprintf(w, "\nsteps (start is the offset from the run's start)\n")
		fmt.Fprintf(w, "  %3s  %-44s  %-8s  %9s  %9s\n", "seq", "step", "status", "start", "duration")
		for _, s := range rec.Steps {
			fmt.Fprintf(w, "  %3d  %-44s  %-8s  %9s  %9s\n", s.Seq, clip(termLine(s.Title()), 44), s.Status, offset(r.StartedAt, s.Start), duration(s.Start, s.End))
		}
	}
	var prevParams map[string]any
	for _, s := range rec.Steps {
		fmt.Fprintf(w, "\nstep %d  %s  %s  start %s  duration %s\n", s.Seq, termLine(s.Name), s.Status, offset(r.StartedAt, s.Start), duration(s.Start, s.End))
		if len(s.Labels) > 0 {
			fmt.Fprintf(w, "  labels:     %s\n", termLine(compactJSON(s.Labels)))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "  error:      %s\n", s.Error)
		}
		if s.Settings != nil {
			showSettings(w, s.Settings, prevParams)
			prevParams = s.Settings.Parameters
		}
		showProvenance(w, s.Provenance, rec.Fields(s))
		showResults(w, s)
		showHostLoad(w, s.Host)
	}
	showTunings(w, rec.Tunings())
	showOutput(w, rec)
}

// offset words t as seconds after start: "+12.3s".
func offset(start, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("+%.2fs", t.Sub(start).Seconds())
}

// showOutput prints the run's events in time order: print lines bare, log
// lines and wtd's events with their level and source, and the report
// tables redrawn where they were printed.
func showOutput(w io.Writer, rec *record.Record) {
	if len(rec.Events) == 0 {
		return
	}
	fmt.Fprintf(w, "\noutput and events (offset from the run's start)\n")
	for _, ev := range rec.Events {
		at := offset(rec.Run.StartedAt, ev.TS)
		if opt, n, ok := record.TableOf(ev); ok {
			fmt.Fprintf(w, "%8s  report.table (redrawn from the record):\n", at)
			record.WriteReport(w, rec.Steps[:min(n, len(rec.Steps))], opt)
			continue
		}
		if ev.Source == record.SourcePrint {
			fmt.Fprintf(w, "%8s  %s\n", at, ev.Message)
			continue
		}
		fmt.Fprintf(w, "%8s  %-5s %-8s %s\n", at, ev.Level, termLine(ev.Source), ev.Message)
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// showSettings prints a step's settings; of the server parameters, only
// those that changed since the previous step (all of them are in --json).
func showSettings(w io.Writer, s *record.Settings, prev map[string]any) {
	gb := "default"
	if s.CacheSizeGB != 0 {
		gb = strconv.FormatFloat(s.CacheSizeGB, 'f', -1, 64)
	}
	sd := "default"
	if s.SyncDelay != 0 {
		sd = strconv.FormatFloat(s.SyncDelay, 'f', -1, 64)
	}
	maxBytes := "–" // not reported: a mongos, or a server without WiredTiger
	if s.CacheMaxBytes != 0 {
		maxBytes = strconv.FormatInt(s.CacheMaxBytes, 10)
	}
	fmt.Fprintf(w, "  settings:   cacheSizeGB=%s (max bytes %s) engineConfig=%q syncdelay=%s\n", gb, maxBytes, s.EngineConfig, sd)
	if len(s.Parameters) == 0 {
		return
	}
	var changed []string
	for _, k := range sortedKeys(s.Parameters) {
		if prev == nil || compactJSON(prev[k]) != compactJSON(s.Parameters[k]) {
			changed = append(changed, k+"="+plain(s.Parameters[k]))
		}
	}
	switch {
	case prev == nil:
		fmt.Fprintf(w, "  parameters: %d server parameters read (wtd show --json lists them)\n", len(s.Parameters))
	case len(changed) > 0:
		fmt.Fprintf(w, "  parameters: changed since the previous step: %s\n", strings.Join(changed, " "))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// plain formats a JSON value, whole numbers without exponents.
func plain(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if v == nil {
		return ""
	}
	if _, ok := v.(map[string]any); ok {
		return compactJSON(v)
	}
	return fmt.Sprint(v)
}

func showProvenance(w io.Writer, p *record.Provenance, fields []record.Field) {
	if p == nil {
		return
	}
	verdict := p.Verdict
	if verdict == "" {
		verdict = "no verdict"
	}
	fmt.Fprintf(w, "  provenance: %s: %s\n", verdict, p.Reason)
	for _, f := range fields {
		fmt.Fprintf(w, "    %-22s %s\n", f.Name+":", f.Value)
	}
	if p.ApparentMBps != nil {
		fmt.Fprintf(w, "    %-22s %.1f MB/s read into the cache\n", "apparent read rate:", *p.ApparentMBps)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "    not measured:          %s\n", n)
	}
}

func showServers(w io.Writer, servers []store.ServerRecord) {
	if len(servers) == 0 {
		fmt.Fprintf(w, "  servers:   none\n")
		return
	}
	for i, s := range servers {
		label := "  servers:   "
		if i > 0 {
			label = "             "
		}
		fmt.Fprintf(w, "%s%s %s version %s gitVersion %s, %s\n", label, termLine(s.Name), termLine(s.URI), orDash(s.Version), orDash(s.GitVersion), record.ServerHow(s))
	}
}

func showArtifacts(w io.Writer, arts []store.Artifact) {
	for i, a := range arts {
		label := "  files:     "
		if i > 0 {
			label = "             "
		}
		note := ""
		if a.Note != "" {
			note = " (" + a.Note + ")"
		}
		fmt.Fprintf(w, "%s%s, %d bytes%s\n", label, termLine(a.Path), a.Size, termLine(note))
	}
}

func orDash(s string) string {
	if s == "" {
		return record.Dash
	}
	return s
}

func showResults(w io.Writer, s record.StepRecord) {
	switch res := s.Result.(type) {
	case nil:
	case map[string]any:
		if ops, ok := res["ops"].(map[string]any); ok {
			for _, op := range sortedKeys(ops) {
				o, _ := ops[op].(map[string]any)
				fmt.Fprintf(w, "  %-10s  count %s errors %s  %.0f ops/s  p50 %s ms  p95 %s ms  p99 %s ms  max %s ms\n", op+":",
					plain(o["count"]), plain(o["errors"]), num(o["ops_per_sec"]), latencyMs(o, "p50_micros"), latencyMs(o, "p95_micros"), latencyMs(o, "p99_micros"), latencyMs(o, "max_micros"))
			}
		} else if _, ok := res["docs_per_sec"]; ok {
			fmt.Fprintf(w, "  load:       %v docs, %.0f docs/s, %.1f MB/s", plain(res["docs"]), num(res["docs_per_sec"]), num(res["mb_per_sec"]))
			if b, ok := res["batch"].(map[string]any); ok {
				fmt.Fprintf(w, "; per batch of documents: %v batches, p50 %s ms, p99 %s ms", plain(b["count"]), latencyMs(b, "p50_micros"), latencyMs(b, "p99_micros"))
			}
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "  result:     %s\n", clip(compactJSON(res), 400))
		}
	default:
		fmt.Fprintf(w, "  result:     %s\n", clip(compactJSON(res), 400))
	}
	if sv := s.Server; sv != nil {
		fmt.Fprintf(w, "  server:     pages read %s, bytes read %s MB, evicted unmodified %s / modified %s, by app threads %s (%s ms)",
			record.FmtOpt(sv.PagesRead, "%.0f", 1), record.FmtOpt(sv.BytesRead, "%.1f", 1e6), record.FmtOpt(sv.EvictedUnmodified, "%.0f", 1),
			record.FmtOpt(sv.EvictedModified, "%.0f", 1), record.FmtOpt(sv.AppThreadEvicted, "%.0f", 1), record.FmtOpt(sv.AppEvictMicros, "%.1f", 1000))
		fmt.Fprintf(w, "; cache peak %s MB, dirty peak %s MB\n", record.FmtOpt(sv.CacheUsedPeak, "%.1f", 1e6), record.FmtOpt(sv.DirtyPeak, "%.1f", 1e6))
		if v := record.MeasuresOf(s).PagesReadPerOp; v != nil {
			fmt.Fprintf(w, "  pages read/op: %.3f (the pages read into the cache over all the step's operations)\n", *v)
		}
	}
}

// latencyMs formats latency key (microseconds) of stats o in ms, Dash when
// o counts no success (its latencies were not measured).
func latencyMs(o map[string]any, key string) string {
	if num(o["count"]) == 0 {
		return record.Dash
	}
	return fmt.Sprintf("%.3f", num(o[key])/1000)
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// showHostLoad prints how busy the host was during a step, and says when
// it was too busy for the step's figures to be compared.
func showHostLoad(w io.Writer, h *record.HostLoad) {
	if h == nil {
		return
	}
	fmt.Fprintf(w, "  host:       load %s on %s cores, CPU busy %s%% (other processes %s%%), steal %s%%, other processes' disk I/O %s MB/s (%d samples)\n",
		record.FmtOpt(h.Load1, "%.1f", 1), record.FmtOpt(h.Cores, "%.0f", 1), record.FmtOpt(h.BusyPct, "%.0f", 1),
		record.FmtOpt(h.OthersCPUPct, "%.0f", 1), record.FmtOpt(h.StealPct, "%.0f", 1), record.FmtOpt(h.OthersIOBytesPerSec, "%.1f", 1e6), h.Samples)
	if why := h.Busy(); why != "" {
		fmt.Fprintf(w, "              busy with other work (%s): comparisons of this step are not reliable\n", why)
	}
}

// pushLine is a run's push to the central results store in words.
func pushLine(p store.Push) string {
	if !p.Waiting() {
		return fmt.Sprintf("%s to %s", p.PushedAt.Local().Format("2006-01-02 15:04:05"), termLine(p.Dest))
	}
	if p.Attempts == 0 {
		return "waiting in the outbox"
	}
	tries := "1 attempt"
	if p.Attempts > 1 {
		tries = fmt.Sprintf("%d attempts", p.Attempts)
	}
	return fmt.Sprintf("waiting in the outbox: %s failed, the last with %s; next at %s", tries,
		termLine(store.RedactURI(p.LastError)), p.NextAt.Local().Format("15:04:05"))
}

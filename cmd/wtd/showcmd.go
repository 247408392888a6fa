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

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"

	"wtd/engine"
	"wtd/engine/store"
)

func newRunsCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recorded runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return usageErr("--limit %d: must be at least 1", limit)
			}
			st, err := openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close(context.WithoutCancel(cmd.Context()))
			runs, err := st.ListRuns(cmd.Context(), limit)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			t := table.NewWriter()
			t.SetOutputMirror(env.Stdout)
			t.SetStyle(table.StyleLight)
			t.AppendHeader(table.Row{"id", "playbook", "start", "duration", "status", "reason"})
			for _, r := range runs {
				t.AppendRow(table.Row{r.ID, r.PlaybookPath, r.StartedAt.Local().Format("2006-01-02 15:04:05"), duration(r.StartedAt, r.EndedAt), r.Status, clip(r.Reason, 60)})
			}
			t.Render()
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs to list")
	return cmd
}

func duration(start, end time.Time) string {
	if end.IsZero() {
		return "-"
	}
	return end.Sub(start).Round(100 * time.Millisecond).String()
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func newShowCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	return &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run: its steps with settings, provenance and results",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return usageErr("run %q: want a run id (see wtd runs)", args[0])
			}
			st, err := openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close(context.WithoutCancel(cmd.Context()))
			return showRun(cmd.Context(), env.Stdout, st, id)
		},
	}
}

func showRun(ctx context.Context, w io.Writer, st *store.Store, id int64) error {
	r, err := st.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return usageErr("no run %d (see wtd runs)", id)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintf(w, "run %d  %s  %s\n", r.ID, r.Status, r.PlaybookPath)
	if r.Reason != "" {
		fmt.Fprintf(w, "  reason:    %s\n", r.Reason)
	}
	fmt.Fprintf(w, "  started:   %s (%s)\n", r.StartedAt.Local().Format(time.RFC3339), duration(r.StartedAt, r.EndedAt))
	fmt.Fprintf(w, "  playbook:  sha256 %s\n", r.PlaybookSHA256)
	fmt.Fprintf(w, "  params:    %s\n", compactJSON(r.Params))
	fmt.Fprintf(w, "  trigger:   %s\n", r.Trigger)
	showServers(ctx, w, st, id)
	fmt.Fprintf(w, "  host:      %s\n", compactJSON(r.Host))
	fmt.Fprintf(w, "  wtd:       %s\n", r.WtdVersion)
	showArtifacts(ctx, w, st, id)
	if n, err := st.SampleCount(ctx, id); err == nil {
		srcs, _ := st.SampleSources(ctx, id)
		fmt.Fprintf(w, "  samples:   %d (%s)\n", n, strings.Join(srcs, ", "))
	}
	steps, err := st.Steps(ctx, id)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	for _, s := range steps {
		fmt.Fprintf(w, "\nstep %d  %s  %s  %s\n", s.Seq, s.Name, s.Status, duration(s.StartedAt, s.EndedAt))
		if len(s.Labels) > 0 {
			fmt.Fprintf(w, "  labels:     %s\n", compactJSON(s.Labels))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "  error:      %s\n", s.Error)
		}
		showSettings(w, s.Settings)
		showProvenance(w, s.Provenance)
		showResults(w, s.Results)
	}
	return nil
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func decode(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func showSettings(w io.Writer, raw json.RawMessage) {
	m := decode(raw)
	if m == nil {
		return
	}
	fmt.Fprintf(w, "  settings:   cacheSizeGB=%s (max bytes %s) engineConfig=%q syncdelay=%s\n",
		orDefault(m["cache_size_gb"]), plain(m["cache_max_bytes"]), orEmpty(m["engine_config"]), orDefault(m["syncdelay"]))
	if params, ok := m["parameters"].(map[string]any); ok {
		keys := make([]string, 0, len(params))
		for k := range params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := []string{}
		for _, k := range keys {
			parts = append(parts, k+"="+plain(params[k]))
		}
		fmt.Fprintf(w, "  parameters: %s\n", strings.Join(parts, " "))
	}
}

func orDefault(v any) string {
	if v == nil {
		return "default"
	}
	return plain(v)
}

// plain formats a JSON value, whole numbers without exponents.
func plain(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func orEmpty(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func showProvenance(w io.Writer, raw json.RawMessage) {
	m := decode(raw)
	if m == nil {
		return
	}
	verdict := orEmpty(m["verdict"])
	if verdict == "" {
		verdict = "no verdict"
	}
	fmt.Fprintf(w, "  provenance: %s %s: %s docs, %s MB data, %s MB on disk; cache %s MB; memory %s GB (data/memory %s)\n",
		verdict, orEmpty(m["ns"]), opt(m, "documents", "%.0f", 1), opt(m, "dataset_bytes", "%.1f", 1e6), opt(m, "storage_bytes", "%.1f", 1e6),
		opt(m, "cache_bytes", "%.0f", 1<<20), opt(m, "memory_bytes", "%.1f", 1<<30), opt(m, "dataset_memory_ratio", "%.3f", 1))
	fmt.Fprintf(w, "              cleared: %v; warm-up: %v; Cached %s MB -> %s MB %s\n", m["cleared"], m["warmup"],
		opt(m, "cached_before", "%.1f", 1<<20), opt(m, "cached_after", "%.1f", 1<<20), orEmpty(m["drop_reason"]))
	fmt.Fprintf(w, "              reason: %v\n", m["reason"])
	if notes, ok := m["notes"].([]any); ok {
		for _, n := range notes {
			fmt.Fprintf(w, "              not measured: %v\n", n)
		}
	}
}

// opt formats m[key] divided by div, "–" when it is missing or null (not
// measured).
func opt(m map[string]any, key, format string, div float64) string {
	f, ok := m[key].(float64)
	if !ok {
		return engine.Dash
	}
	return fmt.Sprintf(format, f/div)
}

func showServers(ctx context.Context, w io.Writer, st *store.Store, id int64) {
	servers, err := st.Servers(ctx, id)
	if err != nil || len(servers) == 0 {
		fmt.Fprintf(w, "  servers:   none\n")
		return
	}
	for i, s := range servers {
		label := "  servers:   "
		if i > 0 {
			label = "             "
		}
		how := "attached (not started by wtd)"
		if s.Started {
			how = "started by wtd from " + s.Binary
			if s.PID > 0 {
				how += fmt.Sprintf(", pid %d", s.PID)
			}
		}
		fmt.Fprintf(w, "%s%s %s version %s gitVersion %s, %s\n", label, s.Name, s.URI, orDash(s.Version), orDash(s.GitVersion), how)
	}
}

func showArtifacts(ctx context.Context, w io.Writer, st *store.Store, id int64) {
	arts, err := st.Artifacts(ctx, id)
	if err != nil || len(arts) == 0 {
		return
	}
	for i, a := range arts {
		label := "  files:     "
		if i > 0 {
			label = "             "
		}
		note := ""
		if a.Note != "" {
			note = " (" + a.Note + ")"
		}
		fmt.Fprintf(w, "%s%s, %d bytes%s\n", label, a.Path, a.Size, note)
	}
}

func orDash(s string) string {
	if s == "" {
		return engine.Dash
	}
	return s
}

func showResults(w io.Writer, raw json.RawMessage) {
	m := decode(raw)
	if m == nil {
		return
	}
	if res, ok := m["result"].(map[string]any); ok {
		if ops, ok := res["ops"].(map[string]any); ok {
			names := make([]string, 0, len(ops))
			for k := range ops {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, op := range names {
				o, _ := ops[op].(map[string]any)
				fmt.Fprintf(w, "  %-10s  count %v errors %v  %.0f ops/s  p50 %.3f ms  p95 %.3f ms  p99 %.3f ms  max %.3f ms\n", op+":",
					o["count"], o["errors"], num(o["ops_per_sec"]), num(o["p50_micros"])/1000, num(o["p95_micros"])/1000, num(o["p99_micros"])/1000, num(o["max_micros"])/1000)
			}
		} else if _, ok := res["docs_per_sec"]; ok {
			fmt.Fprintf(w, "  load:       %v docs, %.0f docs/s, %.1f MB/s", plain(res["docs"]), num(res["docs_per_sec"]), num(res["mb_per_sec"]))
			if b, ok := res["batch"].(map[string]any); ok {
				fmt.Fprintf(w, "; per batch of documents: %v batches, p50 %.3f ms, p99 %.3f ms", plain(b["count"]), num(b["p50_micros"])/1000, num(b["p99_micros"])/1000)
			}
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "  result:     %s\n", compactJSON(res))
		}
	} else if r, ok := m["result"]; ok {
		fmt.Fprintf(w, "  result:     %s\n", compactJSON(r))
	}
	if sv, ok := m["server"].(map[string]any); ok {
		fmt.Fprintf(w, "  server:     pages read %s, bytes read %s MB, evicted unmodified %s / modified %s, by app threads %s (%s ms)",
			opt(sv, "pages_read", "%.0f", 1), opt(sv, "bytes_read", "%.1f", 1e6), opt(sv, "evicted_unmodified", "%.0f", 1),
			opt(sv, "evicted_modified", "%.0f", 1), opt(sv, "app_thread_evicted", "%.0f", 1), opt(sv, "app_thread_evict_micros", "%.1f", 1000))
		fmt.Fprintf(w, "; cache peak %s MB, dirty peak %s MB\n", opt(sv, "cache_used_peak", "%.1f", 1e6), opt(sv, "dirty_peak", "%.1f", 1e6))
		if per, ok := sv["per_op"].(map[string]any); ok && len(per) > 0 {
			fmt.Fprintf(w, "  per op:     %s\n", compactJSON(per))
		}
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"

	"wtd/engine/record"
	"wtd/engine/store"
)

func newRunsCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var limit int
	var f store.RunFilter
	var since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recorded runs, newest first",
		Long: `Runs lists the recorded runs, newest first: id, playbook, parameters (short
form), what triggered the run, start, duration, status and reason.

--since takes a duration back from now (36h, 7d) or a date (2026-11-30, or an
RFC 3339 time).`,
		Example: `  wtd runs --playbook cache_sweep --status ok
  wtd runs --since 7d --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageErr("--limit %d: must be 0 (all) or more", limit)
			}
			switch f.Status {
			case "", store.StatusRunning, store.StatusOK, store.StatusFailed, store.StatusAborted:
			default:
				return usageErr("--status %q: want running, ok, failed or aborted", f.Status)
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageErr("--since %q: %v", since, err)
				}
				f.Since = t
			}
			f.Limit = limit
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				runs, err := st.FindRuns(ctx, f)
				if err != nil {
					return failed(err)
				}
				if asJSON {
					docs, err := record.Runs(ctx, st, runs)
					if err != nil {
						return failed(err)
					}
					return printJSON(env.Stdout, docs)
				}
				t := table.NewWriter()
				t.SetOutputMirror(termWriter{env.Stdout})
				t.SetStyle(table.StyleLight)
				t.AppendHeader(table.Row{"id", "playbook", "params", "trigger", "start", "duration", "status", "reason"})
				differ := differingParams(runs)
				for _, r := range runs {
					t.AppendRow(table.Row{r.ID, termLine(r.PlaybookPath), clip(termLine(paramsDifferingFirst(r.Params, differ)), 48), r.Trigger,
						r.StartedAt.Local().Format("2006-01-02 15:04:05"), duration(r.StartedAt, r.EndedAt), r.Status, clip(termLine(r.Reason), 50)})
				}
				t.Render()
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs to list (0: all)")
	cmd.Flags().StringVar(&f.Playbook, "playbook", "", "only runs of this playbook (path, file name, or name without .lua)")
	cmd.Flags().StringVar(&f.Status, "status", "", "only runs with this status: running, ok, failed or aborted")
	cmd.Flags().StringVar(&since, "since", "", "only runs started since: a duration back (36h, 7d) or a date (2026-11-30)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of runs")
	return cmd
}

// parseSince reads a --since value: a duration back from now (Go's units
// and d for days) or a date or time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.ParseFloat(n, 64); err == nil && days >= 0 {
			return now.Add(-time.Duration(days * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a duration (36h, 7d) or a date (2026-11-30)")
}

// differingParams names the parameters whose values are not the same in
// every one of runs (given in some only, or with other values).
func differingParams(runs []store.Run) map[string]bool {
	out := map[string]bool{}
	seen := map[string]string{}
	count := map[string]int{}
	for _, r := range runs {
		for k, v := range r.Params {
			text := record.ParamValue(v)
			if prev, ok := seen[k]; ok && prev != text {
				out[k] = true
			}
			seen[k] = text
			count[k]++
		}
	}
	for k, n := range count {
		if n != len(runs) {
			out[k] = true
		}
	}
	return out
}

// paramsDifferingFirst is record.ParamsShort with the parameters in differ
// first, so that a cut list still shows what tells runs apart.
func paramsDifferingFirst(params map[string]any, differ map[string]bool) string {
	first, rest := map[string]any{}, map[string]any{}
	for k, v := range params {
		if differ[k] {
			first[k] = v
		} else {
			rest[k] = v
		}
	}
	return strings.TrimSpace(record.ParamsShort(first) + " " + record.ParamsShort(rest))
}

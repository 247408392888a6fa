package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/fleet"
)

func newRunsCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var limit int
	var f store.RunFilter
	var since string
	var asJSON, waiting bool
	var rf resultsFlags
	var host string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recorded runs, newest first",
		Long: `Runs lists the recorded runs, newest first: id, playbook, parameters (short
form), what triggered the run, start, duration, status and reason.

--since takes a duration back from now (36h, 7d) or a date (2026-11-30, or an
RFC 3339 time).

A run queued to be pushed to the central results store (see "Many hosts" in
the README) shows its state in a column "pushed": yes, or waiting (with the
failed attempts); --waiting lists only the runs still waiting.

--results URI lists the runs of the central results store instead, of every
host that pushed there (--host: one host, by its id or name; --playbook,
--status, --since and --limit as for this host's), newest first: each named
HOSTID:RUN (wtd show HOSTID:RUN --results URI shows one).`,
		Example: `  wtd runs --playbook cache_sweep --status ok
  wtd runs --since 7d --json
  wtd runs --waiting
  wtd runs --results mongodb://results.example.net/ --host db7 --playbook cache_sweep`,
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
			cfg, central, err := rf.readConfig(env, nil)
			if err != nil {
				return err
			}
			if central {
				if waiting {
					return usageErr("--waiting is about this host's outbox: it does not go with --results")
				}
				return listCentralRuns(ctx, env, cfg, fleet.Filter{Host: host, Playbook: f.Playbook, Status: f.Status, Since: f.Since, Limit: limit}, asJSON)
			}
			if host != "" {
				return usageErr("--host selects a host of the central results store: give --results URI")
			}
			return withStore(ctx, openStore, func(st *store.Store) error {
				if waiting {
					f.Limit = 0 // the limit applies to the waiting ones
				}
				runs, err := st.FindRuns(ctx, f)
				if err != nil {
					return failed(err)
				}
				docs, err := record.Runs(ctx, st, runs)
				if err != nil {
					return failed(err)
				}
				if waiting {
					runs, docs = waitingRuns(runs, docs, limit)
				}
				if asJSON {
					return printJSON(env.Stdout, docs)
				}
				pushCol := slices.ContainsFunc(docs, func(d record.Run) bool { return d.Push != nil })
				t := table.NewWriter()
				t.SetOutputMirror(termWriter{env.Stdout})
				t.SetStyle(table.StyleLight)
				header := table.Row{"id", "playbook", "params", "trigger", "start", "duration", "status", "reason"}
				if pushCol {
					header = append(header, "pushed")
				}
				t.AppendHeader(header)
				differ := differingParams(runs)
				for i, r := range runs {
					row := table.Row{r.ID, termLine(r.PlaybookPath), clip(termLine(paramsDifferingFirst(r.Params, differ)), 48), r.Trigger,
						r.StartedAt.Local().Format("2006-01-02 15:04:05"), duration(r.StartedAt, r.EndedAt), r.Status, clip(termLine(r.Reason), 50)}
					if pushCol {
						row = append(row, pushedWord(docs[i].Push))
					}
					t.AppendRow(row)
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
	cmd.Flags().BoolVar(&waiting, "waiting", false, "only runs waiting to be pushed to the central results store")
	cmd.Flags().StringVar(&host, "host", "", "with --results: only runs of this host (its id or name)")
	rf.add(cmd, "list the runs of this central results store instead")
	return cmd
}

// waitingRuns keeps the runs (and their documents) waiting to be pushed,
// limit of them at most (0: all).
func waitingRuns(runs []store.Run, docs []record.Run, limit int) ([]store.Run, []record.Run) {
	var rs []store.Run
	ds := []record.Run{}
	for i, d := range docs {
		if d.Push != nil && d.Push.Waiting && (limit == 0 || len(ds) < limit) {
			rs, ds = append(rs, runs[i]), append(ds, d)
		}
	}
	return rs, ds
}

// pushedWord is a run's push state in the runs table: yes, waiting (n
// failed), or – when it was never queued.
func pushedWord(p *record.Push) string {
	switch {
	case p == nil:
		return "–"
	case !p.Waiting:
		return "yes"
	case p.Attempts == 1:
		return "waiting (1 failed)"
	case p.Attempts > 1:
		return fmt.Sprintf("waiting (%d failed)", p.Attempts)
	default:
		return "waiting"
	}
}

// listCentralRuns prints the runs of the central results store.
func listCentralRuns(ctx context.Context, env Env, cfg fleet.Config, ff fleet.Filter, asJSON bool) error {
	if ff.Status == store.StatusRunning {
		return usageErr("--status running: the results store holds only runs that ended")
	}
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		return failed(err)
	}
	defer sink.Close(context.WithoutCancel(ctx))
	runs, err := sink.List(ctx, ff)
	if err != nil {
		return failed(err)
	}
	if asJSON {
		if runs == nil {
			runs = []fleet.FleetRun{}
		}
		return printJSON(env.Stdout, runs)
	}
	t := table.NewWriter()
	t.SetOutputMirror(termWriter{env.Stdout})
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"run", "host", "playbook", "params", "trigger", "start", "duration", "status", "reason"})
	for _, r := range runs {
		end := time.Time{}
		if r.Run.EndedAt != nil {
			end = *r.Run.EndedAt
		}
		reason := ""
		if r.Run.Reason != nil {
			reason = *r.Run.Reason
		}
		t.AppendRow(table.Row{r.Key, termLine(r.Host), termLine(r.Run.Playbook), clip(termLine(record.ParamsShort(r.Run.Params)), 48), r.Run.Trigger,
			r.Run.StartedAt.Local().Format("2006-01-02 15:04:05"), duration(r.Run.StartedAt, end), r.Run.Status, clip(termLine(reason), 50)})
	}
	t.Render()
	return nil
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

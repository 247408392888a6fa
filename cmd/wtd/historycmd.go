package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/fleet"
)

func newHistoryCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var opt compare.HistoryOptions
	var asJSON bool
	var rf resultsFlags
	var host string
	cmd := &cobra.Command{
		Use:   "history PLAYBOOK",
		Short: "Follow a measure of each step across a playbook's runs and find where it changed",
		Long: `History takes the ok runs of a playbook that have the same parameters as its
newest ok run, oldest first, and follows one measure of each matched step
(same name, labels and round; for an imported run, wtd import, the label
saying what changed at a step's start does not count, so that a server's
processes before and after a change match) across them. It finds change points by
E-divisive means (the energy statistic splits the series where the
distributions on either side differ most) and keeps a split only when
Welch's t-test between the two sides gives p < --alpha; then it searches both
sides again; at the end each change point is tested again between its
neighbours. A change point has at least --min-runs runs on each side: a step
measured in fewer than twice that many runs says too few runs. Each change
point is marked regression or improvement (peaks: change) with its size,
and the step's settings that differ between the runs on either side of it
(cacheSizeGB, engineConfig, setParameter, server parameters).
Pairwise comparisons of nightly runs cry wolf; change
points look at the whole series.

Measures: ` + strings.Join(compare.MeasureNames, ", ") + `.
PLAYBOOK is a path, a file name or a file name without .lua; the imports of
a server are import:HOST (wtd runs lists them).

With --results URI, the history is of the playbook's runs in the central
results store (see "Many hosts" in the README), host by host: each host's ok
runs with the parameters of its newest one, each step's measure across them
and that host's own change points, so that a change on one host shows as
such and a difference between hosts is not taken for a change. --host H
(a host id or name) picks one host.`,
		Example: `  wtd history cache_sweep
  wtd history cache_sweep --metric p99 --json
  wtd history import:db1.example.net --metric read-latency
  wtd history cache_sweep --results mongodb://results.example.net/ --host db7`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(opt.Alpha > 0 && opt.Alpha < 1) {
				return usageErr("--alpha %v: want a level between 0 and 1", opt.Alpha)
			}
			if opt.MinSegment < 2 {
				return usageErr("--min-runs %d: want 2 or more", opt.MinSegment)
			}
			if err := compare.CheckMeasures([]string{opt.Measure}); err != nil {
				return usageErr("--metric: %v", err)
			}
			ctx := cmd.Context()
			cfg, central, err := rf.readConfig(env, nil)
			if err != nil {
				return err
			}
			if host != "" && !central {
				return usageErr("--host picks a host of the central results store: give --results URI")
			}
			if central {
				h, err := centralHistory(ctx, cfg, args[0], host, opt)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(env.Stdout, h)
				}
				printHostsHistory(termWriter{env.Stdout}, h)
				return nil
			}
			return withStore(ctx, openStore, func(st *store.Store) error {
				h, err := compare.LoadHistory(ctx, st, args[0], opt)
				if errors.Is(err, store.ErrNotFound) {
					return usageErr("%v", err)
				}
				if err != nil {
					return failed(err)
				}
				if asJSON {
					return printJSON(env.Stdout, h)
				}
				printHistory(termWriter{env.Stdout}, h)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&opt.Measure, "metric", "ops/s", "measure to follow: "+strings.Join(compare.MeasureNames, ", "))
	cmd.Flags().Float64Var(&opt.Alpha, "alpha", compare.DefaultHistoryAlpha, "significance level of a change point")
	cmd.Flags().IntVar(&opt.MinSegment, "min-runs", compare.DefaultMinSegment, "fewest runs on each side of a change point")
	cmd.Flags().IntVar(&opt.Limit, "limit", 0, "the newest N runs only (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().StringVar(&host, "host", "", "with --results: this host's runs only (a host id or name)")
	rf.add(cmd, "follow the playbook's runs in this central results store, host by host")
	return cmd
}

// centralHistory is the history of playbook across the hosts of the
// central results store cfg names (host: one of them; "" all).
func centralHistory(ctx context.Context, cfg fleet.Config, playbook, host string, opt compare.HistoryOptions) (*compare.HostsHistory, error) {
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		return nil, failed(err)
	}
	defer sink.Close(context.WithoutCancel(ctx))
	hosts, err := sink.PlaybookRecords(ctx, playbook, host, opt.Limit)
	if err != nil {
		return nil, failed(err)
	}
	if len(hosts) == 0 {
		where := "in the results store"
		if host != "" {
			where = "of host " + host + " in the results store"
		}
		return nil, usageErr("no ok run of playbook %s %s (see wtd runs --results)", playbook, where)
	}
	runs := make([]compare.HostRuns, len(hosts))
	for i, h := range hosts {
		runs[i] = compare.HostRuns{Host: h.Host, HostID: h.HostID, Runs: h.Records, Skipped: h.Skipped}
	}
	h, err := compare.BuildHostsHistory(fleet.PlaybookName(playbook), runs, opt)
	return h, failed(err)
}

// printHostsHistory prints a history across hosts: each host's as wtd
// history prints one host's.
func printHostsHistory(w io.Writer, h *compare.HostsHistory) {
	fmt.Fprintf(w, "%s of %s on %s, change points of each host apart\n", h.Measure, termLine(h.Playbook), plural(len(h.Hosts), "host"))
	for _, hh := range h.Hosts {
		name := hh.HostID
		if hh.Host != "" {
			name = hh.Host + " (id " + hh.HostID + ")"
		}
		fmt.Fprintf(w, "\n== host %s\n", termLine(name))
		printHistory(w, hh.History)
	}
}

// sparkline draws values as block characters, "·" where a run lacks one.
func sparkline(pts []compare.HistoryPoint) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if p.Value != nil {
			lo, hi = math.Min(lo, *p.Value), math.Max(hi, *p.Value)
		}
	}
	blocks := []rune("▁▂▃▄▅▆▇█")
	var b strings.Builder
	for _, p := range pts {
		switch {
		case p.Value == nil:
			b.WriteRune('·')
		case hi == lo:
			b.WriteRune(blocks[3])
		default:
			b.WriteRune(blocks[int(math.Round((*p.Value-lo)/(hi-lo)*7))])
		}
	}
	return b.String()
}

func printHistory(w io.Writer, h *compare.History) {
	fmt.Fprintf(w, "%s of %s: %s with parameters %s", h.Measure, termLine(h.Playbook), plural(len(h.Runs), "ok run"), orDash(termLine(record.ParamsShort(h.Params))))
	if len(h.Runs) > 0 {
		fmt.Fprintf(w, ", runs %d to %d", h.Runs[0].ID, h.Runs[len(h.Runs)-1].ID)
	}
	fmt.Fprintln(w)
	if h.Skipped > 0 {
		fmt.Fprintf(w, "(%s with other parameters left out)\n", plural(h.Skipped, "ok run"))
	}
	fmt.Fprintf(w, "change points: E-divisive means, Welch's t-test at alpha %g, at least %s on each side\n", h.Alpha, plural(h.MinRuns, "run"))
	for _, s := range h.Series {
		var vals []float64
		for _, p := range s.Points {
			if p.Value != nil {
				vals = append(vals, *p.Value)
			}
		}
		fmt.Fprintf(w, "\n%s\n  %s\n", termLine(s.Step), sparkline(s.Points))
		if len(vals) == 0 {
			fmt.Fprintf(w, "  not measured\n")
			continue
		}
		st := record.Summarise(vals)
		last := vals[len(vals)-1]
		fmt.Fprintf(w, "  %d values: last %s, min %s, median %s, max %s\n", len(vals), compare.FormatValue(&last), compare.FormatValue(&st.Min), compare.FormatValue(&st.Median), compare.FormatValue(&st.Max))
		switch {
		case s.Note != "":
			fmt.Fprintf(w, "  %s\n", s.Note)
		case len(s.Changes) == 0:
			fmt.Fprintf(w, "  no change point\n")
		}
		for _, c := range s.Changes {
			fmt.Fprintf(w, "  %s at run %d: %+.1f%% (%s -> %s, p %.2g)\n", c.Kind, c.Run, c.ChangePct, compare.FormatValue(&c.Before), compare.FormatValue(&c.After), c.P)
			if len(c.Settings) > 0 {
				fmt.Fprintf(w, "    settings changed there: %s\n", termLine(strings.Join(c.Settings, ", ")))
			}
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

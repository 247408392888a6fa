package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine/record"
	"wtd/engine/store"
)

type samplesFlags struct {
	source  string
	metrics []string
	match   string
	rate    bool
	format  string
}

func newSamplesCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var f samplesFlags
	cmd := &cobra.Command{
		Use:   "samples RUN",
		Short: "Print a run's sampled metrics: their names, or values as CSV or JSON",
		Long: `Samples prints what the sampler recorded during a run.

Without --metric it lists the metric names of the source (only those
containing --match, in any case). With one or more --metric it prints one row
per sample: time, seconds since the run's start, the step running then (its
number and title; empty between steps) and one column per metric, as plain
decimal numbers (empty where a sample lacks the metric).

--rate turns each metric into its per-second rate between samples, for
counters: a counter that goes down (the server restarted) starts again from
zero, so the rate is its new value over the interval, never a negative spike.

Sources are "host" and "server:m1", "server:m2", ... (see wtd show RUN).

` + runArgHelp,
		Example: `  wtd samples latest --match "cache.bytes"
  wtd samples 3 --metric "wiredTiger.cache.bytes currently in the cache" --metric "wiredTiger.cache.tracked dirty bytes in the cache"
  wtd samples 3 --rate --metric "wiredTiger.cache.pages read into cache" --format json
  wtd samples 3 --source host --metric cpu.user --metric cpu.iowait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.format != "csv" && f.format != "json" {
				return usageErr("--format %q: want csv or json", f.format)
			}
			if f.rate && len(f.metrics) == 0 {
				return usageErr("--rate needs --metric")
			}
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				id, err := resolveRun(ctx, st, args[0])
				if err != nil {
					return err
				}
				srcs, err := st.SampleSources(ctx, id)
				if err != nil {
					return failed(err)
				}
				if !slices.Contains(srcs, f.source) {
					return usageErr("run %d has no samples from %q; its sources: %s", id, f.source, orDash(strings.Join(srcs, ", ")))
				}
				names, err := st.MetricNames(ctx, id, f.source)
				if err != nil {
					return failed(err)
				}
				if len(f.metrics) == 0 {
					n := 0
					for _, k := range names {
						if f.match == "" || strings.Contains(strings.ToLower(k), strings.ToLower(f.match)) {
							fmt.Fprintln(env.Stdout, termLine(k))
							n++
						}
					}
					fmt.Fprintf(env.Stderr, "%d metrics of %s (of %d)\n", n, f.source, len(names))
					return nil
				}
				metrics := make([]string, len(f.metrics))
				for i, m := range f.metrics {
					if metrics[i], err = pickMetric(names, m); err != nil {
						return usageErr("run %d source %s: %v (list them: wtd samples %d --source %s --match WORD)", id, f.source, err, id, f.source)
					}
				}
				return printSamples(ctx, env.Stdout, st, id, f, metrics)
			})
		},
	}
	cmd.Flags().StringVar(&f.source, "source", "server:m1", "sample source")
	cmd.Flags().StringArrayVar(&f.metrics, "metric", nil, "metric to print, repeatable (dotted serverStatus path or host metric)")
	cmd.Flags().StringVar(&f.match, "match", "", "list only metric names containing this text (any case)")
	cmd.Flags().BoolVar(&f.rate, "rate", false, "print per-second rates of counters (a counter that goes down restarts from zero)")
	cmd.Flags().StringVar(&f.format, "format", "csv", "csv or json")
	return cmd
}

// pickMetric finds want among names: exactly, else the one name equal to
// it in any case.
func pickMetric(names []string, want string) (string, error) {
	var folded []string
	for _, n := range names {
		if n == want {
			return n, nil
		}
		if strings.EqualFold(n, want) {
			folded = append(folded, n)
		}
	}
	if len(folded) == 1 {
		return folded[0], nil
	}
	return "", fmt.Errorf("no metric %q", want)
}

// stepAt returns the step running at t, or nil.
func stepAt(steps []record.StepRecord, t time.Time) *record.StepRecord {
	for i := range steps {
		s := &steps[i]
		if !t.Before(s.Start) && (s.End.IsZero() || !t.After(s.End)) {
			return s
		}
	}
	return nil
}

func decimal(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func printSamples(ctx context.Context, w io.Writer, st *store.Store, id int64, f samplesFlags, metrics []string) error {
	run, err := st.GetRun(ctx, id)
	if err != nil {
		return failed(err)
	}
	rawSteps, err := st.Steps(ctx, id)
	if err != nil {
		return failed(err)
	}
	steps := record.StepsFromStore(rawSteps)
	cols, err := st.SeriesSet(ctx, id, f.source, metrics)
	if err != nil {
		return failed(err)
	}
	if f.rate {
		for i := range cols.Values {
			cols.Values[i] = record.Rates(cols.TS, cols.Values[i])
		}
	}
	if f.format == "json" {
		type row struct {
			Time     time.Time  `json:"time"`
			Seconds  float64    `json:"seconds"`
			Step     *int       `json:"step"`
			StepName string     `json:"step_name,omitempty"`
			Values   []*float64 `json:"values"`
		}
		doc := struct {
			Run     int64    `json:"run"`
			Source  string   `json:"source"`
			Rate    bool     `json:"rate"`
			Metrics []string `json:"metrics"`
			Rows    []row    `json:"rows"`
		}{Run: id, Source: f.source, Rate: f.rate, Metrics: metrics, Rows: []row{}}
		for j, ts := range cols.TS {
			r := row{Time: ts.UTC(), Seconds: ts.Sub(run.StartedAt).Seconds(), Values: make([]*float64, len(metrics))}
			if s := stepAt(steps, ts); s != nil {
				seq := s.Seq
				r.Step, r.StepName = &seq, s.Title()
			}
			for i := range metrics {
				if v := cols.Values[i][j]; !math.IsNaN(v) && !math.IsInf(v, 0) {
					r.Values[i] = &v
				}
			}
			doc.Rows = append(doc.Rows, r)
		}
		return printJSON(w, doc)
	}
	header := []string{"time", "seconds", "step", "step_name"}
	for _, m := range metrics {
		if f.rate {
			m += " (per s)"
		}
		header = append(header, csvField(termLine(m)))
	}
	fmt.Fprintln(w, strings.Join(header, ","))
	for j, ts := range cols.TS {
		step, name := "", ""
		if s := stepAt(steps, ts); s != nil {
			step, name = strconv.Itoa(s.Seq), csvField(termLine(s.Title()))
		}
		line := []string{ts.UTC().Format(time.RFC3339Nano), strconv.FormatFloat(ts.Sub(run.StartedAt).Seconds(), 'f', 3, 64), step, name}
		for i := range metrics {
			line = append(line, decimal(cols.Values[i][j]))
		}
		fmt.Fprintln(w, strings.Join(line, ","))
	}
	return nil
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine/store"
)

func newSamplesCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var source, metric, match string
	cmd := &cobra.Command{
		Use:   "samples RUN",
		Short: "Print a run's recorded metrics as CSV",
		Long: `Samples prints what the sampler recorded during a run. With --metric, one
metric of one source as CSV (time, seconds since the first sample, value);
without it, the metric names of the source (filtered by --match).

Sources are "host" and "server:m1", "server:m2", ... (see wtd show RUN).`,
		Example: `  wtd samples 3 --match cache.bytes
  wtd samples 3 --metric "wiredTiger.cache.bytes currently in the cache"
  wtd samples 3 --source host --metric cpu.iowait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return usageErr("run %q: want a run id (see wtd runs)", args[0])
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close(context.WithoutCancel(ctx))
			if _, err := st.GetRun(ctx, id); err != nil {
				return usageErr("no run %d (see wtd runs)", id)
			}
			srcs, err := st.SampleSources(ctx, id)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if !contains(srcs, source) {
				return usageErr("run %d has no samples from %q; its sources: %s", id, source, strings.Join(srcs, ", "))
			}
			if metric == "" {
				return listMetrics(ctx, env, st, id, source, match)
			}
			pts, err := st.Series(ctx, id, source, metric)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if len(pts) == 0 {
				return usageErr("run %d source %s has no metric %q (list them: wtd samples %d --source %s --match WORD)", id, source, metric, id, source)
			}
			fmt.Fprintf(env.Stdout, "time,seconds,%s\n", csvField(metric))
			for _, p := range pts {
				fmt.Fprintf(env.Stdout, "%s,%.3f,%g\n", p.TS.UTC().Format(time.RFC3339Nano), p.TS.Sub(pts[0].TS).Seconds(), p.Value)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "server:m1", "sample source")
	cmd.Flags().StringVar(&metric, "metric", "", "metric to print (dotted serverStatus path or host metric)")
	cmd.Flags().StringVar(&match, "match", "", "list only metric names containing this text")
	return cmd
}

func listMetrics(ctx context.Context, env Env, st *store.Store, id int64, source, match string) error {
	samples, err := st.Samples(ctx, id, source, time.Time{}, time.Time{})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	names := map[string]bool{}
	for _, s := range samples {
		for k := range s.Metrics {
			if match == "" || strings.Contains(k, match) {
				names[k] = true
			}
		}
	}
	list := make([]string, 0, len(names))
	for k := range names {
		list = append(list, k)
	}
	sort.Strings(list)
	for _, k := range list {
		fmt.Fprintln(env.Stdout, k)
	}
	fmt.Fprintf(env.Stderr, "%d samples, %d metrics\n", len(samples), len(list))
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

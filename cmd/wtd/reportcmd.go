package main

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"wtd/compare"
	"wtd/engine/store"
	"wtd/report"
)

func newReportCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var out, format, by, pngDir, chromium string
	var opt compare.Options
	cmd := &cobra.Command{
		Use:   "report RUN [RUN...] [-o report.html]",
		Short: "Write a run's report as one self-contained HTML page with charts",
		Long: `Report writes one HTML file that opens offline (its scripts and styles are
inlined; it fetches nothing): the run's header (playbook, parameters, host,
servers), every step with its start, duration, verdict and the eight
provenance figures, the summary tables the playbook printed, and charts over
the run's time with every step marked: operations per second and p99 latency
per second of each workload step; the WiredTiger cache (used, dirty,
configured maximum); pages read into and written from the cache per second;
application-thread eviction time; tickets out and operations queued (where
the server reports them); host CPU (user, system, iowait) and disk
throughput. The charts zoom (drag) and show values under the cursor.

With two runs or more, the charts overlay them (seconds since each run
started) and the report adds the comparison of each run with the first, as
wtd compare prints it (--alpha, --force, --test).

--png DIR writes each chart as a PNG file in DIR instead (as well, with
-o), for a ticket or a chat: DIR/01-ops.png, ... They are drawn by Chromium,
headless (Debian: apt-get install chromium; --chromium names another).

--by LABEL adds, for each run, the comparison of the steps of each value of
a label or setting with those of its first value, as wtd compare RUN --by
LABEL prints it; a table the playbook printed with verdict = true adds its
own.

` + runArgHelp,
		Example: `  wtd report latest -o sweep.html
  wtd report 12 14 -o nightly.html
  wtd report latest --by cacheSizeGB
  wtd report latest --png charts/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "html" {
				return usageErr("--format %q: only html is supported", format)
			}
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				ids := make([]int64, len(args))
				for i, a := range args {
					id, err := resolveRun(ctx, st, a)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				m, err := report.Load(ctx, st, ids...)
				if err != nil {
					return failed(err)
				}
				popt := report.PageOptions{Compare: opt, By: by}
				if pngDir != "" {
					exe, err := report.FindChromium(chromium)
					if err != nil {
						return usageErr("%v", err)
					}
					files, err := m.WritePNGs(ctx, popt, pngDir, exe)
					for _, f := range files {
						fmt.Fprintf(env.Stderr, "wtd: wrote %s\n", f)
					}
					if err != nil {
						return failed(err)
					}
					if !cmd.Flags().Changed("output") {
						return nil
					}
				}
				if out == "-" {
					return failed(m.WritePage(env.Stdout, popt))
				}
				f, err := os.Create(out)
				if err != nil {
					return usageErr("%v", err)
				}
				bw := bufio.NewWriter(f)
				err = m.WritePage(bw, popt)
				if err == nil {
					err = bw.Flush()
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return failed(err)
				}
				info, _ := os.Stat(out)
				fmt.Fprintf(env.Stderr, "wtd: wrote %s (%d KB, %d charts)\n", out, info.Size()/1024, len(m.Charts))
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "report.html", "file to write (- for standard output)")
	cmd.Flags().StringVar(&format, "format", "html", "html (the only format)")
	cmd.Flags().Float64Var(&opt.Alpha, "alpha", compare.DefaultAlpha, "significance level of the comparison of several runs")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "compare runs that are not comparable")
	cmd.Flags().StringVar(&opt.Test, "test", compare.TestMannWhitney, "mwu or bootstrap")
	cmd.Flags().StringVar(&pngDir, "png", "", "write each chart as a PNG file in this directory (drawn by Chromium)")
	cmd.Flags().StringVar(&chromium, "chromium", "", "the Chromium to draw --png with (default: chromium on PATH)")
	cmd.Flags().StringVar(&by, "by", "", "add the comparison of each run's steps by this label or setting (as wtd compare RUN --by)")
	return cmd
}

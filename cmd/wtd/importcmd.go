package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine/ftdcimport"
	"wtd/engine/store"
)

type importFlags struct {
	name   string
	steps  []string
	asJSON bool
}

func newImportCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import PATH...",
		Short: "Record a mongod's diagnostic.data (FTDC files) as runs, one per server process",
		Long: `Import reads the FTDC files a mongod or mongos writes into its diagnostic.data
directory (metrics.<time>-<n> and metrics.interim; give the directory or files)
and records one run per server process (triggered by "import"): a restart,
seen as a new pid or process start, begins a new run.

Each run records the server as it was (version and git version from
buildInfo, host, pid, the command line from getCmdLineOpts: cacheSizeGB, the
engine configuration string, setParameter; the replica set's name), the
host's cores, memory and kernel from hostInfo, and the samples under source
server:NAME: serverStatus fields under the names wtd's own sampler gives them
("wiredTiger.cache.bytes currently in the cache"), the other sections under
their own ("replSetGetStatus.members.0.health", "local.oplog.rs.stats.size",
"transportLayerStats...", "systemMetrics.vmstat.pgfault"); and under source
host the host's CPU, memory and disks from systemMetrics, with the names and
units of wtd's own host metrics (cpu.user in %, mem.used in bytes,
disk.sda.read_bytes per second).

Steps: "process" over each run, or over each stretch between parameter
changes that 8.0's periodic metadata records (labelled with what changed:
since the server's previous process in the import, or at the change), and
one per --step NAME=FROM..TO
in every run it overlaps. FROM and TO are RFC 3339 times, or offsets from
the first sample imported ("+30m", "1h15m"). wtd did not control these
servers: every step's cache verdict is "unknown", and what was not
measured is shown as "–".

A file imported before (the same content) makes nothing new, and is said
so. Read them back with wtd show, samples, report and compare; compare two
windows with wtd compare RUN@NAME RUN@NAME.`,
		Example: `  wtd import /var/lib/mongodb/diagnostic.data
  wtd import diagnostic.data --name prod1 --step normal=2024-04-16T11:40:00Z..2024-04-16T12:40:00Z --step incident=2024-04-16T15:00:00Z..2024-04-16T16:00:00Z
  wtd import metrics.2024-04-16T11-34-42Z-00000 --step first=+0..+30m --json
  wtd compare 7@normal 7@incident`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !serverName.MatchString(f.name) {
				return usageErr("--name %q: want letters, digits, '-', '_' or '.', starting with a letter or digit", f.name)
			}
			var windows []ftdcimport.Window
			for _, s := range f.steps {
				w, err := parseWindow(s)
				if err != nil {
					return usageErr("--step %q: %v", s, err)
				}
				windows = append(windows, w)
			}
			for _, p := range args {
				if err := ftdcimport.Check(p); err != nil {
					var nf *ftdcimport.NotFTDCError
					if errors.As(err, &nf) {
						return usageErr("%v", err)
					}
					return usageErr("import %s: %v", p, err)
				}
			}
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				start := time.Now()
				rep, err := ftdcimport.Import(ctx, st, args, ftdcimport.Options{Name: f.name, Windows: windows, WtdVersion: Version})
				if rep != nil {
					for _, k := range rep.Known {
						fmt.Fprintf(env.Stderr, "%s: imported before (same content, sha256 %.12s…, into run %s): nothing new\n",
							termLine(k.Path), k.Prev.SHA256, joinIDs(k.Prev.Runs))
					}
				}
				if err != nil {
					return failed(err)
				}
				for _, s := range rep.Skipped {
					fmt.Fprintf(env.Stderr, "wtd: skipped %s\n", termLine(s))
				}
				for _, name := range rep.Unmatched {
					fmt.Fprintf(env.Stderr, "wtd: --step %s: no sample imported falls in its window: no step made\n", name)
				}
				if f.asJSON {
					out := rep.Runs
					if out == nil {
						out = []ftdcimport.Result{}
					}
					return printJSON(env.Stdout, out)
				}
				if len(rep.Runs) == 0 {
					fmt.Fprintln(env.Stdout, "nothing new imported")
					return nil
				}
				for _, r := range rep.Runs {
					fmt.Fprintf(env.Stdout, "run %d: %s %s, %d samples, %s .. %s (%s)\n", r.Run, termLine(r.Server), orDash(r.Version),
						r.Samples, r.First.Format(time.RFC3339), r.Last.Format(time.RFC3339), r.Last.Sub(r.First).Round(time.Second))
					for _, s := range r.Skipped {
						fmt.Fprintf(env.Stdout, "  skipped: %s\n", termLine(s))
					}
				}
				if rep.Dropped > 0 {
					fmt.Fprintf(env.Stdout, "%d samples read twice (a previous process's interim chunk) were kept once\n", rep.Dropped)
				}
				fmt.Fprintf(env.Stderr, "imported %d runs in %s\n", len(rep.Runs), time.Since(start).Round(time.Millisecond))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&f.name, "name", "m1", "the server's name in the runs: samples go to source server:NAME")
	cmd.Flags().StringArrayVar(&f.steps, "step", nil, "a window to record as a step, NAME=FROM..TO (RFC 3339 times or offsets such as +10m), repeatable")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print a JSON array: one object per run made")
	return cmd
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return orDash(strings.Join(s, ", "))
}

// parseWindow reads NAME=FROM..TO.
func parseWindow(s string) (ftdcimport.Window, error) {
	name, span, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return ftdcimport.Window{}, errors.New("want NAME=FROM..TO")
	}
	from, to, ok := strings.Cut(span, "..")
	if !ok || from == "" || to == "" {
		return ftdcimport.Window{}, errors.New("want NAME=FROM..TO, FROM and TO RFC 3339 times (2024-04-16T15:00:00Z) or offsets (+30m)")
	}
	w := ftdcimport.Window{Name: name}
	ft, ferr := time.Parse(time.RFC3339, from)
	tt, terr := time.Parse(time.RFC3339, to)
	if ferr == nil && terr == nil {
		w.From, w.To = ft, tt
	} else {
		fo, err1 := parseOffset(from)
		to2, err2 := parseOffset(to)
		if err1 != nil || err2 != nil {
			return w, fmt.Errorf("FROM and TO must both be RFC 3339 times (2024-04-16T15:00:00Z) or both offsets from the first sample (+30m, 1h): %q, %q", from, to)
		}
		w.Offsets, w.FromOff, w.ToOff = true, fo, to2
	}
	if w.Offsets && w.ToOff <= w.FromOff || !w.Offsets && !w.To.After(w.From) {
		return w, errors.New("TO must come after FROM")
	}
	return w, nil
}

func parseOffset(s string) (time.Duration, error) {
	s = strings.TrimPrefix(s, "+")
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad offset %q", s)
	}
	return d, nil
}

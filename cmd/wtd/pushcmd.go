package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"wtd/engine/store"
	"wtd/fleet"
)

// resultsFlags name the central results store on the command line.
type resultsFlags struct {
	uri, database, tokenFile string
}

// add registers --results, --results-db and --results-token-file.
func (f *resultsFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.uri, "results", "", what+" (a mongodb:// or mongodb+srv:// URI; default $WTD_RESULTS)")
	cmd.Flags().StringVar(&f.database, "results-db", fleet.DefaultDatabase, "the results store's database")
	cmd.Flags().StringVar(&f.tokenFile, "results-token-file", "", "a file holding the password of the results URI's user")
}

// config is the results store the flags (or $WTD_RESULTS) name; ok is
// false when none is named.
func (f resultsFlags) config(env Env) (cfg fleet.Config, ok bool, err error) {
	uri := f.uri
	if uri == "" {
		uri = env.Getenv("WTD_RESULTS")
	}
	if uri == "" {
		return fleet.Config{}, false, nil
	}
	cfg = fleet.Config{URI: uri, Database: f.database, TokenFile: f.tokenFile}
	if err := fleet.CheckURI(uri); err != nil {
		return fleet.Config{}, false, usageErr("--results: %v", err)
	}
	return cfg, true, nil
}

// readConfig is the results store a read command (show, compare,
// history, runs) reads: the one --results names; or $WTD_RESULTS when the
// command names runs and each is one of the store's (HOST:RUN, a UUID).
// Otherwise the command reads this host's results database: a variable
// set for pushing does not turn "wtd show 12" into a question to the
// fleet.
func (f resultsFlags) readConfig(env Env, refs []string) (cfg fleet.Config, ok bool, err error) {
	if f.uri == "" {
		if len(refs) == 0 {
			return fleet.Config{}, false, nil
		}
		for _, r := range refs {
			if !fleet.IsRunRef(r) {
				return fleet.Config{}, false, nil
			}
		}
	}
	return f.config(env)
}

func newPushCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var rf resultsFlags
	var all bool
	cmd := &cobra.Command{
		Use:   "push [RUN...] --results URI",
		Short: "Push finished runs to the central results store (MongoDB)",
		Long: `Push copies finished runs to the central results store, a MongoDB deployment
many hosts push to (see "Many hosts" in the README): each run with its servers,
steps, output, changes, files' names and sizes, and its samples as the results
database stores them. A run pushed again replaces its documents and sends no
sample block twice.

Without RUN, push sends the runs waiting in the outbox (queued by the daemon
when they ended, or by an earlier push that failed); --all adds every finished
run not pushed yet. A run that fails stays in the outbox with its error (see
wtd runs); the exit status is then 1.

` + runArgHelp,
		Example: `  wtd push latest --results mongodb://results.example.net/?tls=true
  WTD_RESULTS=mongodb://wtd@results.example.net/ wtd push --all --results-token-file /etc/wtd/results.pw`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, ok, err := rf.config(env)
			if err != nil {
				return err
			}
			if !ok {
				return usageErr("--results URI is required (or $WTD_RESULTS)")
			}
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				ids, err := pushIDs(ctx, st, args, all)
				if err != nil {
					return err
				}
				if len(ids) == 0 {
					fmt.Fprintln(env.Stdout, "nothing to push: no run waits in the outbox (give RUN, or --all)")
					return nil
				}
				p := &fleet.Pusher{Config: cfg, Store: st}
				results, err := p.PushRuns(ctx, ids)
				if err != nil {
					return failed(err)
				}
				bad := 0
				for _, r := range results {
					if r.Err != nil {
						bad++
						fmt.Fprintf(env.Stdout, "run %d: not pushed: %v (it waits in the outbox)\n", r.RunID, store.RedactURI(r.Err.Error()))
						continue
					}
					fmt.Fprintf(env.Stdout, "run %d: pushed to %s: %d documents (%d new), %d of %d sample blocks sent, %s\n", r.RunID, cfg.Dest(),
						r.Stats.Docs, r.Stats.Inserted, r.Stats.Frames-r.Stats.Skipped, r.Stats.Frames, byteSize(r.Stats.Bytes))
				}
				if bad > 0 {
					return &exitError{code: exitFailed, err: fmt.Errorf("%d of %d runs not pushed", bad, len(results))}
				}
				return nil
			})
		},
	}
	rf.add(cmd, "the central results store")
	cmd.Flags().BoolVar(&all, "all", false, "push every finished run not pushed yet, as well")
	return cmd
}

// pushIDs are the runs wtd push sends: those named, else those waiting in
// the outbox and, with all, every finished run not pushed yet.
func pushIDs(ctx context.Context, st *store.Store, args []string, all bool) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		id, err := resolveRun(ctx, st, a)
		if err != nil {
			return nil, err
		}
		r, err := st.GetRun(ctx, id)
		if err != nil {
			return nil, failed(err)
		}
		if r.EndedAt.IsZero() {
			return nil, usageErr("run %d goes on: it can be pushed once it ends", id)
		}
		ids = append(ids, id)
	}
	if len(args) > 0 {
		return ids, nil
	}
	pushes, err := st.Pushes(ctx)
	if err != nil {
		return nil, failed(err)
	}
	for id, p := range pushes {
		if p.Waiting() {
			ids = append(ids, id)
		}
	}
	if all {
		runs, err := st.FindRuns(ctx, store.RunFilter{})
		if err != nil {
			return nil, failed(err)
		}
		for _, r := range runs {
			if _, queued := pushes[r.ID]; !queued && !r.EndedAt.IsZero() {
				ids = append(ids, r.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// byteSize is n bytes in words: 812 B, 51.9 kB, 3.2 MB.
func byteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine/store"
)

func newRmCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	return &cobra.Command{
		Use:   "rm RUN...",
		Short: "Delete runs with everything recorded about them",
		Long: `Rm deletes runs from the results database: their steps, samples, events,
servers and kept files. A run that is still going on is refused. Nothing is
deleted when any RUN is unknown.

` + runArgHelp,
		Example: `  wtd rm 3 4
  wtd rm latest:cache_sweep`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				var ids []int64
				for _, a := range args {
					id, err := resolveRun(ctx, st, a)
					if err != nil {
						return err
					}
					ids = append(ids, id)
				}
				if err := st.DeleteRuns(ctx, ids); errors.Is(err, store.ErrRunning) || errors.Is(err, store.ErrUnrestored) {
					return usageErr("%v", err)
				} else if err != nil {
					return failed(err)
				}
				for _, id := range ids {
					fmt.Fprintf(env.Stdout, "deleted run %d\n", id)
				}
				return nil
			})
		},
	}
}

func newPruneCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	keepDays := -1
	cmd := &cobra.Command{
		Use:   "prune --keep-days N",
		Short: "Delete the runs that started more than N days ago",
		Long: `Prune deletes the finished runs that started more than --keep-days days ago,
with everything recorded about them, so that a database fed every night does
not grow forever (SQLite reuses the freed pages for new runs). Runs still
going on are kept.`,
		Example: `  wtd prune --keep-days 30`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keepDays < 0 {
				return usageErr("--keep-days N is required (N >= 0)")
			}
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				cutoff := time.Now().Add(-time.Duration(keepDays) * 24 * time.Hour)
				ids, err := st.PruneRuns(ctx, cutoff)
				if err != nil {
					return failed(err)
				}
				parts := make([]string, len(ids))
				for i, id := range ids {
					parts[i] = fmt.Sprint(id)
				}
				fmt.Fprintf(env.Stdout, "deleted %d runs started before %s", len(ids), cutoff.Local().Format("2006-01-02 15:04"))
				if len(ids) > 0 {
					fmt.Fprintf(env.Stdout, ": %s", strings.Join(parts, " "))
				}
				fmt.Fprintln(env.Stdout)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&keepDays, "keep-days", -1, "keep the runs of the last N days")
	return cmd
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
)

func newRestoreCmd(env Env, stores storeOpener) *cobra.Command {
	return &cobra.Command{
		Use:   "restore RUN",
		Short: "Put back what a run changed on a server and has not put back yet",
		Long: `Restore puts back what a run changed on servers wtd did not start: a service's
config file (its original content, then one restart through its service
manager), runtime setParameter/reconfigure changes (the values read before
each change) and the indexes m:create_index made (dropped). A command the
operator let m:command run (--allow-commands) cannot be put back. A run does
this itself at its end; every wtd command that opens the results database
does it for runs whose wtd was killed (and records them aborted). Restore
does it on demand, e.g. after a restore that failed. A run still going on
(its wtd alive and holding its experiment lock) is refused.

` + runArgHelp,
		Example: `  wtd restore 12
  wtd restore latest`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return withStore(ctx, stores.existingAsIs, func(st *store.Store) error {
				id, err := resolveRun(ctx, st, args[0])
				// The other runs, as opening the database does; this one
				// only once, below (a failed restore restarts a service).
				stores.restore(ctx, st, id)
				if err != nil {
					return err
				}
				r, err := st.GetRun(ctx, id)
				if err != nil {
					return failed(err)
				}
				if r.Status == store.StatusRunning {
					owner := fmt.Sprintf("wtd pid %d", r.OwnerPID)
					if r.LockPath != "" {
						owner += ", experiment lock " + r.LockPath
					}
					return usageErr("run %d is still going on (%s): it puts back what it changed when it ends", id, owner)
				}
				if err := engine.RestoreRun(ctx, st, id, env.Stderr); err != nil {
					return failed(err)
				}
				changes, err := st.Changes(ctx, id)
				if err != nil {
					return failed(err)
				}
				for _, c := range changes {
					fmt.Fprintf(env.Stdout, "%s\n", termText(describeChange(c)))
				}
				if len(changes) == 0 {
					fmt.Fprintf(env.Stdout, "run %d changed nothing that needs putting back\n", id)
				}
				return nil
			})
		},
	}
}

// describeChange is one line about a change: what, on which server, and
// whether it was put back.
func describeChange(c store.Change) string {
	what := record.ChangeWhat(c)
	state := c.State
	switch c.State {
	case store.ChangeRestored:
		state = "restored " + c.RestoredAt.Format("2006-01-02 15:04:05")
	case store.ChangeKept:
		state = "kept (keep = true)"
		if c.Detail != "" {
			state = c.Detail // "kept by tune{} (keep_best)"
		}
	case store.ChangePending:
		state = "NOT restored"
		if c.Detail != "" {
			state += ": " + c.Detail
		}
	case store.ChangeIrreversible:
		line := fmt.Sprintf("%s not restorable: %s", c.Server, what)
		if c.Detail != "" {
			line += "; " + c.Detail
		}
		return line
	}
	if c.State == store.ChangeRestored && c.Detail != "" {
		state += " (" + c.Detail + ")"
	}
	return fmt.Sprintf("%s %s: %s", c.Server, what, state)
}

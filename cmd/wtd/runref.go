package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"wtd/engine/store"
)

// resolveRun turns a RUN argument into a run id: a number, "latest" (the
// newest run) or "latest:PLAYBOOK" (the newest run of that playbook: its
// path, file name, or file name without .lua).
func resolveRun(ctx context.Context, st *store.Store, arg string) (int64, error) {
	if arg == "latest" || strings.HasPrefix(arg, "latest:") {
		pb := strings.TrimPrefix(strings.TrimPrefix(arg, "latest"), ":")
		if arg != "latest" && pb == "" {
			return 0, usageErr("run %q: want latest:PLAYBOOK", arg)
		}
		r, err := st.LatestRun(ctx, pb)
		if errors.Is(err, store.ErrNotFound) {
			return 0, usageErr("run %s: %v", arg, err)
		}
		if err != nil {
			return 0, &exitError{code: exitFailed, err: err}
		}
		return r.ID, nil
	}
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return 0, usageErr("run %q: want a run id, latest or latest:PLAYBOOK (see wtd runs)", arg)
	}
	if _, err := st.GetRun(ctx, id); errors.Is(err, store.ErrNotFound) {
		return 0, usageErr("no run %d (see wtd runs)", id)
	} else if err != nil {
		return 0, &exitError{code: exitFailed, err: err}
	}
	return id, nil
}

// withStore opens the database, runs fn and closes it.
func withStore(ctx context.Context, open func(context.Context) (*store.Store, error), fn func(*store.Store) error) error {
	st, err := open(ctx)
	if err != nil {
		return err
	}
	defer st.Close(context.WithoutCancel(ctx))
	return fn(st)
}

// failed wraps an error that is not the user's: exit 1.
func failed(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitFailed, err: err}
}

// runArgHelp is the help text of a RUN argument.
const runArgHelp = `RUN is a run id, "latest" (the newest run) or "latest:PLAYBOOK" (the newest
run of that playbook, named by its path, file name, or file name without .lua).`

func describeRun(r store.Run) string {
	return fmt.Sprintf("run %d (%s, %s)", r.ID, r.PlaybookPath, r.Status)
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return failed(enc.Encode(v))
}

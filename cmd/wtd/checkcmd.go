package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine/record"
	"wtd/luabind"
)

func newCheckCmd(env Env) *cobra.Command {
	var params []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check PLAYBOOK [-p name=value ...]",
		Short: "Check a playbook and its parameters without running anything",
		Long: `Check runs the whole playbook, loops and all, with the -p parameters given,
against a stand-in of the engine: every call checks its options table, method
and arguments exactly as in a run and returns a result of the same shape
(workload results with ops, total and series; load results; server handles
whose methods work; report.steps()), but no server is started or contacted, no
cache dropped, no file written and nothing recorded. sleep() returns at once,
and the playbook's clock (os.time) moves on by what it slept and what its timed
workloads would last. A check is bounded (5 s, 256 MB); one that reaches a
bound, or a pattern function (string.find with a pattern, match, gmatch, gsub),
stops there and says so: what ran until there is checked.

Exit 0 with a summary of what the run would do (servers, steps, loads and
workloads, parameters and their values), 2 with the error, which names the
playbook line as a run's error does. wtd run and wtd daemon (each schedule,
with its params:) run the same check before anything is recorded.`,
		Example: `  wtd check playbooks/cache_sweep.lua
  wtd check playbooks/cache_sweep.lua -p sizes=0.25,1 -p docs=300000
  wtd check playbooks/ycsb.lua --json | jq .steps`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			overrides, err := parseOverrides(params)
			if err != nil {
				return err
			}
			path := args[0]
			src, err := os.ReadFile(path)
			if err != nil {
				return usageErr("read playbook: %v", err)
			}
			rep, err := luabind.CheckPlaybook(cmd.Context(), path, string(src), overrides, luabind.CheckOptions{})
			if asJSON {
				out := checkJSON{OK: err == nil, CheckReport: rep}
				if err != nil {
					out.Error = err.Error()
				}
				if perr := printJSON(env.Stdout, out); perr != nil {
					return perr
				}
			}
			if err != nil {
				return usageErr("%v", err)
			}
			if !asJSON {
				printCheck(env.Stdout, rep, overrides)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "set a playbook parameter (name=value), repeatable")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the check's report (and its error) as JSON")
	return cmd
}

// checkJSON is wtd check --json's output.
type checkJSON struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	*luabind.CheckReport
}

// printCheck writes the summary of a check that passed.
func printCheck(w io.Writer, rep *luabind.CheckReport, overrides map[string]string) {
	tw := termWriter{w}
	line := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	took := rep.Took.Round(time.Millisecond)
	if took == 0 {
		took = rep.Took.Round(time.Microsecond)
	}
	line("%s: ok (checked in %s)", termLine(rep.Path), took)
	if rep.Stopped != "" {
		line("  checked up to %s", termLine(rep.Stopped))
	}
	switch {
	case !rep.Declared:
		line("parameters: none (the playbook does not call params{})")
	default:
		line("parameters:")
		for _, p := range rep.Params {
			from := ""
			if _, ok := overrides[p.Name]; ok {
				from = fmt.Sprintf("  (-p; default %s)", termLine(record.ParamValue(p.Default)))
			}
			line("  %s = %s%s", termLine(p.Name), termLine(record.ParamValue(p.Value)), from)
		}
	}
	if len(rep.Servers) == 0 {
		line("servers: none")
	} else {
		line("servers:")
	}
	for _, s := range rep.Servers {
		what := "mongod.start " + s.Settings
		switch s.Kind {
		case "connect":
			what = "mongod.connect " + s.URI
		case "service":
			what = "mongod.service " + s.Unit + " at " + s.URI
		}
		restarts := ""
		if s.Restarts > 0 {
			restarts = fmt.Sprintf(" (restarted %s)", times(s.Restarts))
		}
		line("  %s  %s%s", s.Name, termLine(strings.TrimSpace(what)), restarts)
	}
	total := 0
	var names []string
	for _, s := range rep.Steps {
		total += s.Count
		names = append(names, fmt.Sprintf("%s x%d", s.Name, s.Count))
	}
	line("steps: %d", total)
	if total > 0 {
		line("  %s", termLine(strings.Join(names, ", ")))
	}
	if len(rep.Calls) > 0 {
		line("loads and workloads:")
	}
	for _, c := range rep.Calls {
		n := ""
		if c.Count > 1 {
			n = fmt.Sprintf(" x%d", c.Count)
		}
		line("  %s %s %s%s: %s", c.Server, c.Kind, termLine(c.NS), n, termLine(c.Detail))
	}
	var extra []string
	if rep.DropCaches > 0 {
		extra = append(extra, "host.drop_caches "+times(rep.DropCaches))
	}
	if rep.Tables > 0 {
		extra = append(extra, "report.table "+times(rep.Tables))
	}
	if len(rep.Thresholds) > 0 {
		extra = append(extra, fmt.Sprintf("%d thresholds", len(rep.Thresholds)))
	}
	if rep.AtLeast > 0 {
		extra = append(extra, "sleeps and timed workloads: "+rep.AtLeast.String())
	}
	if len(extra) > 0 {
		line("also: %s", strings.Join(extra, ", "))
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

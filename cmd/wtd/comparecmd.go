package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/spf13/cobra"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/fleet"
)

type compareFlags struct {
	opt       compare.Options
	baseline  string
	asJSON    bool
	minChange string
	by        string
	results   resultsFlags
}

// parseMinChange reads --min-change: a percentage, "5%" or "5"; 0 is none.
func parseMinChange(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || v >= 100 || math.IsNaN(v) {
		return 0, fmt.Errorf("--min-change %q: want a percentage from 0 to below 100, such as 5%%", s)
	}
	if v == 0 {
		return -1, nil // none
	}
	return v / 100, nil
}

func newCompareCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare A B [C...] | compare RUN --by LABEL | compare --baseline RUN",
		Short: "Compare runs step by step: did anything change beyond noise?",
		Long: `Compare matches the steps of run B (and C, ...) with those of run A by name,
labels and round, and for each matched step and measure (ops/s, p50, p99,
pages read per operation, cache peak, dirty peak, application-thread eviction
time; --measure picks some) prints both values, the change in percent and a
verdict: faster, slower, no difference, or not comparable. Steps repeated in rounds get one more row
with all their rounds together. Peaks are higher or lower, not faster or
slower.

The verdict comes from a test at level --alpha on repeated values: the
per-second series of the steps (ops/s, p99; the last, partial second left
out), else one value per round. --test mwu (the default) is Mann-Whitney's U
test; --test bootstrap is a percentile bootstrap interval of the change of the
median. With fewer than 3 values on a side, or when the test cannot tell, the
verdict is "no difference". A difference the test finds is called faster or
slower only when the change is at least --min-change (5% by default; 0 calls
any significant change a difference): with many per-second values a 1%
change is significant, and rarely worth acting on.

Runs with different parameters, playbooks (or playbook text), servers
(versions) or hosts (cores, memory) are "not comparable", with the reasons;
--force compares them anyway. A step that failed in either run is not
comparable.

--baseline RUN compares RUN with the previous ok run of the same playbook
with the same parameters; --baseline HOST:RUN --results URI with the
previous such run of that host in the results store.

--by LABEL compares within one run: the steps of each value of a label or
setting (cacheSizeGB, a label the playbook gives its steps, a server
parameter) against those of its first value, all rounds of a value together:
"is 1 GB better than 0.25 GB?" is "wtd compare 4 --by cacheSizeGB". Labels
that change with LABEL and nothing else are left out of the matching too.

Across runs, --ignore-label LABEL matches steps that differ only in LABEL:
two runs made with -p sizes=0.25 and -p sizes=1 whose steps are labelled
cacheSizeGB. A label whose values are those of a parameter the runs differ
in, with no value in common, is left out without being named, and that
parameter is then no reason the runs are not comparable.

RUN@STEP compares one step with another, of the same run or of others (every
argument then names its step, by title or name): two --step windows of one
wtd import, "wtd compare 7@normal 7@incident".

` + runArgHelp,
		Example: `  wtd compare 12 14
  wtd compare --baseline latest:cache_sweep
  wtd compare --baseline db7:42 --results "$WTD_RESULTS"
  wtd compare 7@normal 7@incident
  wtd compare 4 --by cacheSizeGB
  wtd compare 4 5 --ignore-label cacheSizeGB
  wtd compare 12 14 --json | jq '.[0].steps[] | select(.verdict == "slower")'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.by != "" && (len(args) != 1 || f.baseline != ""):
				return usageErr("--by %s compares within one run: name one run, such as wtd compare latest --by %s", f.by, f.by)
			case f.by == "" && f.baseline == "" && len(args) < 2:
				return usageErr("compare needs two runs or more, one run and --by LABEL, or --baseline RUN")
			}
			if f.baseline != "" && len(args) > 0 {
				return usageErr("--baseline RUN takes no other runs")
			}
			if !(f.opt.Alpha > 0 && f.opt.Alpha < 1) {
				return usageErr("--alpha %v: want a level between 0 and 1, such as 0.05", f.opt.Alpha)
			}
			if f.opt.Test != compare.TestMannWhitney && f.opt.Test != compare.TestBootstrap {
				return usageErr("--test %q: want mwu or bootstrap", f.opt.Test)
			}
			mc, err := parseMinChange(f.minChange)
			if err != nil {
				return usageErr("%v", err)
			}
			f.opt.MinChange = mc
			if err := compare.CheckMeasures(f.opt.Measures); err != nil {
				return usageErr("--measure: %v", err)
			}
			ctx := cmd.Context()
			print := func(results []*compare.Result) error {
				if f.asJSON {
					return printJSON(env.Stdout, results)
				}
				for i, r := range results {
					if i > 0 {
						fmt.Fprintln(env.Stdout)
					}
					printComparison(termWriter{env.Stdout}, r)
				}
				return nil
			}
			refs := args
			if f.baseline != "" {
				refs = []string{f.baseline}
			}
			cfg, central, err := f.results.readConfig(env, refs)
			if err != nil {
				return err
			}
			if central {
				results, err := centralComparisons(ctx, cfg, args, f)
				if err != nil {
					return err
				}
				return print(results)
			}
			return withStore(ctx, openStore, func(st *store.Store) error {
				results, err := runComparisons(ctx, st, args, f)
				if err != nil {
					return err
				}
				return print(results)
			})
		},
	}
	cmd.Flags().Float64Var(&f.opt.Alpha, "alpha", compare.DefaultAlpha, "significance level of the tests")
	cmd.Flags().StringVar(&f.minChange, "min-change", "5%", "smallest change (percent) called faster or slower; 0: any significant change")
	cmd.Flags().BoolVar(&f.opt.Force, "force", false, "compare runs that are not comparable (different parameters, servers, ...)")
	cmd.Flags().StringVar(&f.opt.Test, "test", compare.TestMannWhitney, "mwu (Mann-Whitney U) or bootstrap (interval of the median's change)")
	cmd.Flags().StringSliceVar(&f.opt.Measures, "measure", nil, "show only these measures (comma list): "+strings.Join(compare.MeasureNames, ", "))
	cmd.Flags().StringVar(&f.baseline, "baseline", "", "compare RUN with the previous ok run of its playbook with the same parameters")
	cmd.Flags().StringVar(&f.by, "by", "", "compare within one run: the steps of each value of this label or setting against its first value")
	cmd.Flags().StringSliceVar(&f.opt.IgnoreLabels, "ignore-label", nil, "labels to leave out when matching steps across runs (comma list)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print a JSON array of comparisons")
	f.results.add(cmd, "compare runs of this central results store (each RUN is HOST:RUN or its UUID)")
	return cmd
}

func runComparisons(ctx context.Context, st *store.Store, args []string, f compareFlags) ([]*compare.Result, error) {
	load := func(ref string) (*record.Record, error) {
		id, err := resolveRun(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		rec, err := record.LoadSteps(ctx, st, id)
		return rec, failed(err)
	}
	if f.baseline != "" {
		id, err := resolveRun(ctx, st, f.baseline)
		if err != nil {
			return nil, err
		}
		r, err := compare.Baseline(ctx, st, id, f.opt)
		if errors.Is(err, store.ErrNotFound) {
			return nil, usageErr("%v", err)
		}
		return []*compare.Result{r}, failed(err)
	}
	return compareRecords(args, f, load)
}

// centralComparisons compares runs of the central results store cfg
// names, read back as their hosts recorded them; with --baseline, the run
// with its host's previous ok run of the playbook (fleet.PreviousOK).
func centralComparisons(ctx context.Context, cfg fleet.Config, args []string, f compareFlags) ([]*compare.Result, error) {
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		return nil, failed(err)
	}
	defer sink.Close(context.WithoutCancel(ctx))
	find := func(ref string) (fleet.FleetRun, error) {
		r, err := sink.Find(ctx, ref)
		if errors.Is(err, fleet.ErrNoRun) {
			return r, usageErr("%v (see wtd runs --results)", err)
		}
		return r, failed(err)
	}
	load := func(r fleet.FleetRun) (*record.Record, error) {
		rec, err := sink.Record(ctx, r)
		return rec, failed(err)
	}
	if f.baseline != "" {
		r, err := find(f.baseline)
		if err != nil {
			return nil, err
		}
		base, err := sink.PreviousOK(ctx, r)
		if errors.Is(err, fleet.ErrNoRun) {
			return nil, usageErr("%v", err)
		}
		if err != nil {
			return nil, failed(err)
		}
		var recs [2]*record.Record
		for i, fr := range []fleet.FleetRun{base, r} {
			if recs[i], err = load(fr); err != nil {
				return nil, err
			}
		}
		return []*compare.Result{compare.Records(recs[0], recs[1], f.opt)}, nil
	}
	return compareRecords(args, f, func(ref string) (*record.Record, error) {
		r, err := find(ref)
		if err != nil {
			return nil, err
		}
		return load(r)
	})
}

// compareRecords compares the runs args name, read by load: one with
// --by, else the first with each of the others (RUN@STEP: one step of each).
func compareRecords(args []string, f compareFlags, load func(ref string) (*record.Record, error)) ([]*compare.Result, error) {
	if f.by != "" {
		rec, err := load(args[0])
		if err != nil {
			return nil, err
		}
		r, err := compare.By(rec, f.by, f.opt)
		if err != nil {
			return nil, usageErr("--by: %v", err)
		}
		return []*compare.Result{r}, nil
	}
	recs := make([]*record.Record, len(args))
	steps := make([]string, len(args))
	for i, a := range args {
		ref := a
		if at := strings.LastIndex(a, "@"); at > 0 {
			ref, steps[i] = a[:at], a[at+1:]
		}
		if (steps[i] == "") != (steps[0] == "") {
			return nil, usageErr("%q and %q: name a step (RUN@STEP) in every argument or in none", args[0], a)
		}
		rec, err := load(ref)
		if err != nil {
			return nil, err
		}
		if recs[i], err = stepOf(rec, steps[i]); err != nil {
			return nil, err
		}
	}
	base := recs[0]
	var out []*compare.Result
	for _, rec := range recs[1:] {
		if steps[0] != "" {
			// One step of each side, compared under one title.
			title := base.Steps[0].Title() + " vs " + rec.Steps[0].Title()
			a := *base
			a.Steps = []record.StepRecord{retitled(base.Steps[0], title)}
			rec.Steps[0] = retitled(rec.Steps[0], title)
			out = append(out, compare.Records(&a, rec, f.opt))
			continue
		}
		out = append(out, compare.Records(base, rec, f.opt))
	}
	return out, nil
}

// stepOf is rec for a comparison; with step, with only that step (by
// title, or by name when one step has it).
func stepOf(rec *record.Record, step string) (*record.Record, error) {
	if step == "" {
		return rec, nil
	}
	var found []record.StepRecord
	var titles []string
	for _, s := range rec.Steps {
		titles = append(titles, s.Title())
		if s.Title() == step {
			found = []record.StepRecord{s}
			break
		}
		if s.Name == step {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		return nil, usageErr("%s has %d steps named %q: name one of %s", compare.RunRef{ID: rec.Run.ID, Key: rec.Key}.Name(), len(found), step, orDash(strings.Join(titles, ", ")))
	}
	rec.Steps = found
	return rec, nil
}

func retitled(s record.StepRecord, title string) record.StepRecord {
	s.Name, s.Labels = title, nil
	return s
}

func runLine(r compare.RunRef) string {
	return fmt.Sprintf("%s (%s, %s, %s)", termLine(r.Name()), termLine(r.Playbook), r.Status, r.StartedAt.Local().Format("2006-01-02 15:04"))
}

// printComparisonHead says what was compared, and whether it could be.
func printComparisonHead(w io.Writer, r *compare.Result) {
	if r.By != nil {
		fmt.Fprintf(w, "%s\n  steps of each %s (%s) compared with %s=%s, all rounds together\n",
			runLine(r.A), termLine(r.By.Label), termLine(strings.Join(r.By.Values, ", ")), termLine(r.By.Label), termLine(r.By.Base))
		if len(r.By.Alongside) > 0 {
			fmt.Fprintf(w, "  labels that change with %s, left out of the matching: %s\n", termLine(r.By.Label), termLine(strings.Join(r.By.Alongside, ", ")))
		}
		return
	}
	fmt.Fprintf(w, "%s\n  compared with %s\n", runLine(r.B), runLine(r.A))
	for _, a := range r.AcrossText() {
		fmt.Fprintf(w, "  steps matched across %s\n", termLine(a))
	}
	switch {
	case r.Comparable:
		fmt.Fprintf(w, "comparable: same playbook, parameters, servers and host\n")
	case r.Forced:
		fmt.Fprintf(w, "NOT COMPARABLE, compared anyway (--force):\n")
	default:
		fmt.Fprintf(w, "NOT COMPARABLE (--force compares them anyway):\n")
	}
	for _, reason := range r.Reasons {
		fmt.Fprintf(w, "  - %s\n", reason)
	}
}

func printComparison(w io.Writer, r *compare.Result) {
	printComparisonHead(w, r)
	test := "Mann-Whitney U"
	if r.Test == compare.TestBootstrap {
		test = "bootstrap interval of the median's change"
	}
	fmt.Fprintf(w, "test: %s at alpha %g, on per-second values (ops/s, p99, an import's server figures) or one value per round; a difference needs a change of at least %g%% (--min-change)\n",
		test, r.Alpha, 100*r.MinChange)
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	colA, colB := termLine(r.A.Name()), termLine(r.B.Name())
	if r.By != nil {
		colA, colB = termLine(r.By.Label+"="+r.By.Base), "the step's value"
	}
	t.AppendHeader(table.Row{"step", "measure", colA, colB, "change", "n", "p / interval", "verdict"})
	for i, s := range r.Steps {
		if i > 0 {
			t.AppendSeparator()
		}
		for j, m := range s.Measures {
			step := ""
			if j == 0 {
				step = s.Step
			}
			change, n, evidence := m.Cells()
			verdict := r.CellVerdict(s, m)
			t.AppendRow(table.Row{clip(termLine(step), 48), m.Measure, compare.FormatValue(m.A), compare.FormatValue(m.B), change, n, evidence, verdict})
		}
	}
	t.SetColumnConfigs([]table.ColumnConfig{{Number: 3, Align: text.AlignRight}, {Number: 4, Align: text.AlignRight}, {Number: 5, Align: text.AlignRight}})
	t.Render()
	if r.By != nil {
		for _, k := range append(append([]string{}, r.OnlyInA...), r.OnlyInB...) {
			fmt.Fprintf(w, "with no step to compare: %s\n", termLine(k))
		}
		r = &compare.Result{Steps: r.Steps, Alpha: r.Alpha, MinChange: r.MinChange, Comparable: true}
	}
	for _, k := range r.OnlyInA {
		fmt.Fprintf(w, "only in %s: %s\n", termLine(r.A.Name()), termLine(k))
	}
	for _, k := range r.OnlyInB {
		fmt.Fprintf(w, "only in %s: %s\n", termLine(r.B.Name()), termLine(k))
	}
	for _, l := range r.VerdictLines() {
		fmt.Fprintf(w, "verdict: %s\n", l.Text)
	}
}

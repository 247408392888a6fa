package compare

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
)

// Options shape a comparison of runs.
type Options struct {
	// Alpha is the significance level (default 0.05).
	Alpha float64
	// Force compares runs whose parameters, playbook, servers or host
	// differ (the reasons are still listed).
	Force bool
	// Test is TestMannWhitney (default) or TestBootstrap.
	Test string
	// Measures, if not empty, keeps only these measures in the rows (names
	// of MeasureNames); verdicts are the same.
	Measures []string
	// MinChange is the smallest relative change of a measure's value (0.05:
	// 5%) that a verdict other than no difference needs, besides p < Alpha:
	// with a thousand per-second values a 1% change is significant, and
	// not worth a word. 0 means DefaultMinChange; below 0, none.
	MinChange float64
	// IgnoreLabels are labels left out when steps are matched across
	// runs: a step of run A matches one of run B that differs from it only
	// there. Labels whose values are those of a parameter the runs differ
	// in are left out without being named.
	IgnoreLabels []string
}

// DefaultMinChange is the smallest change a comparison calls a difference.
const DefaultMinChange = 0.05

// DefaultAlpha is the significance level of a comparison.
const DefaultAlpha = 0.05

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	if o.Test == "" {
		o.Test = TestMannWhitney
	}
	if o.MinChange == 0 {
		o.MinChange = DefaultMinChange
	} else if o.MinChange < 0 {
		o.MinChange = 0
	}
	return o
}

// RunRef names a compared run.
type RunRef struct {
	ID        int64          `json:"id"`
	Playbook  string         `json:"playbook"`
	Status    string         `json:"status"`
	StartedAt time.Time      `json:"started_at"`
	Params    map[string]any `json:"params"`
	// Key names a run of the central results store (HOSTID:RUN); empty
	// for a run of the local results database.
	Key string `json:"key,omitempty"`
}

// Name is how the run is named in text: "run 12", or "run HOSTID:12" for
// a run of the central results store.
func (r RunRef) Name() string {
	if r.Key != "" {
		return "run " + r.Key
	}
	return fmt.Sprintf("run %d", r.ID)
}

// MeasureRow is one measure of a matched step in both runs.
type MeasureRow struct {
	Measure   string   `json:"measure"`
	A         *float64 `json:"a"`
	B         *float64 `json:"b"`
	ChangePct *float64 `json:"change_pct"`
	Judgement
	// Small is true when the test found a difference smaller than the
	// comparison's MinChange: the verdict is then no difference.
	Small bool `json:"below_min_change"`
}

// StepRow compares one matched step, or all the rounds of a repeated step
// together (Rounds true).
type StepRow struct {
	Step    string         `json:"step"` // name and labels, as the run's log names it
	Name    string         `json:"name"`
	Labels  map[string]any `json:"labels"`
	Rounds  bool           `json:"all_rounds"`
	SeqA    []int          `json:"seq_a"`
	SeqB    []int          `json:"seq_b"`
	Verdict string         `json:"verdict"` // from ops/s, or not comparable
	Note    string         `json:"note,omitempty"`
	// HostBusy says, run by run, that the host was busy with other work
	// during the row's steps: its verdict is then not reliable.
	HostBusy []string     `json:"host_busy,omitempty"`
	Measures []MeasureRow `json:"measures"`
	// Value is, in a comparison within one run (By), the value of the
	// label whose steps are B.
	Value string `json:"value,omitempty"`
}

// Reliable is false when the host was busy during a compared step.
func (s StepRow) Reliable() bool { return len(s.HostBusy) == 0 }

// CellVerdict is measure m's verdict in row s as the tables show it: "no
// difference (< 5%)" for a significant change below the minimum, "slower
// (not reliable)" when the host was busy during the row's steps.
func (r *Result) CellVerdict(s StepRow, m MeasureRow) string {
	v := m.VerdictText(r.MinChange)
	if !s.Reliable() && m.Verdict != NoDifference && m.Verdict != NotComparable {
		v += " (not reliable)"
	}
	return v
}

// hostBusy words the busy hosts of a row's steps: "run 3 (load 7.4 on 2
// cores, 61% CPU by other processes)", one per run.
func hostBusy(run RunRef, steps []record.StepRecord) string {
	for _, st := range steps {
		if why := st.Host.Busy(); why != "" {
			return fmt.Sprintf("%s (%s)", run.Name(), why)
		}
	}
	return ""
}

// Result compares run B with run A.
type Result struct {
	A          RunRef    `json:"a"`
	B          RunRef    `json:"b"`
	Comparable bool      `json:"comparable"`
	Reasons    []string  `json:"reasons"` // why the runs are not comparable
	Forced     bool      `json:"forced"`
	Alpha      float64   `json:"alpha"`
	MinChange  float64   `json:"min_change"` // the smallest relative change called a difference
	Test       string    `json:"test"`
	Steps      []StepRow `json:"steps"`
	OnlyInA    []string  `json:"only_in_a"`
	OnlyInB    []string  `json:"only_in_b"`
	// By is set for a comparison within one run (By): the label and its
	// values; A and B are then the same run.
	By *ByValues `json:"by,omitempty"`
	// Across are the labels whose values differ between the runs and
	// that matching left out (Options.IgnoreLabels, or found from the
	// runs' differing parameters).
	Across []Across `json:"across,omitempty"`
}

// Runs compares run b with run a, both read from st.
func Runs(ctx context.Context, st *store.Store, a, b int64, opt Options) (*Result, error) {
	ra, err := record.LoadSteps(ctx, st, a)
	if err != nil {
		return nil, err
	}
	rb, err := record.LoadSteps(ctx, st, b)
	if err != nil {
		return nil, err
	}
	return Records(ra, rb, opt), nil
}

// Baseline compares run id with its baseline: the previous ok run of the
// same playbook with the same parameters (store.PreviousOK). It is the
// regression verdict of a repeated (scheduled) run; no baseline gives an
// error wrapping store.ErrNotFound.
func Baseline(ctx context.Context, st *store.Store, id int64, opt Options) (*Result, error) {
	r, err := st.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	base, err := st.PreviousOK(ctx, r)
	if err != nil {
		return nil, err
	}
	return Runs(ctx, st, base.ID, id, opt)
}

// refOf names rec's run, with its key in the central results store.
func refOf(rec *record.Record) RunRef {
	r := ref(rec.Run)
	r.Key = rec.Key
	return r
}

func ref(r store.Run) RunRef {
	return RunRef{ID: r.ID, Playbook: r.PlaybookPath, Status: r.Status, StartedAt: r.StartedAt, Params: r.Params}
}

// Reasons lists why two runs are not comparable: different playbooks or
// playbook text, parameters, servers (versions) or hosts (cores, memory).
func Reasons(a, b *record.Record) []string { return reasons(a, b, nil) }

// reasons are Reasons without the parameters in skip: those whose values
// a label left out of the matching carries.
func reasons(a, b *record.Record, skip map[string]bool) []string {
	var out []string
	ra, rb := a.Run, b.Run
	if path.Base(ra.PlaybookPath) != path.Base(rb.PlaybookPath) {
		out = append(out, fmt.Sprintf("different playbooks: %s and %s", ra.PlaybookPath, rb.PlaybookPath))
	} else if ra.PlaybookSHA256 != rb.PlaybookSHA256 {
		out = append(out, fmt.Sprintf("the playbook's text differs (sha256 %.12s and %.12s)", ra.PlaybookSHA256, rb.PlaybookSHA256))
	}
	keys := map[string]bool{}
	for k := range ra.Params {
		keys[k] = true
	}
	for k := range rb.Params {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		va, okA := ra.Params[k]
		vb, okB := rb.Params[k]
		if skip[k] {
			continue
		}
		if !okA || !okB || !store.SameParams(map[string]any{k: va}, map[string]any{k: vb}) {
			out = append(out, fmt.Sprintf("parameter %s: %s and %s", k, paramText(va, okA), paramText(vb, okB)))
		}
	}
	sa, sb := serverText(a.Servers), serverText(b.Servers)
	if sa != sb {
		out = append(out, fmt.Sprintf("servers differ: %s and %s", sa, sb))
	}
	if ra.Host.Cores != rb.Host.Cores || ra.Host.MemoryBytes != rb.Host.MemoryBytes {
		ha, hb := hostTexts(ra.Host, rb.Host)
		out = append(out, fmt.Sprintf("hosts differ: %s and %s", ha, hb))
	}
	return out
}

// hostTexts word two hosts as far as comparability goes: cores and memory
// in GB, with the exact bytes when the GB read the same (a kernel upgrade
// can change the memory the kernel reports by a few MB).
func hostTexts(a, b store.HostFacts) (string, string) {
	word := func(h store.HostFacts) string {
		return fmt.Sprintf("%d cores %.1f GB", h.Cores, float64(h.MemoryBytes)/(1<<30))
	}
	wa, wb := word(a), word(b)
	if wa == wb {
		wa += fmt.Sprintf(" (%d bytes)", a.MemoryBytes)
		wb += fmt.Sprintf(" (%d bytes)", b.MemoryBytes)
	}
	return wa, wb
}

func paramText(v any, ok bool) string {
	if !ok {
		return "(not set)"
	}
	return record.ParamValue(v)
}

// serverText words the servers as far as comparability goes: name, how
// they ran and the version they reported.
func serverText(servers []store.ServerRecord) string {
	if len(servers) == 0 {
		return "none"
	}
	parts := make([]string, len(servers))
	for i, s := range servers {
		how := "attached"
		if s.Started {
			how = "started"
		}
		parts[i] = fmt.Sprintf("%s %s %s (%s)", s.Name, how, s.Version, s.GitVersion)
	}
	return strings.Join(parts, ", ")
}

// measure is one of the measures steps are compared on.
type measure struct {
	name, loadName string
	better         Better
	scale          float64
	value          func(record.Measures) *float64
	series         func(record.StepRecord) []float64 // per-second values, nil when none
}

var measures = []measure{
	{"ops/s", "docs/s", HigherIsFaster, 1, func(m record.Measures) *float64 { return m.OpsPerSec }, opsSeconds},
	{"p50 ms", "batch p50 ms", LowerIsFaster, 1e-3, func(m record.Measures) *float64 { return m.P50Micros }, nil},
	{"p99 ms", "batch p99 ms", LowerIsFaster, 1e-3, func(m record.Measures) *float64 { return m.P99Micros }, p99Seconds},
	{"pages read/op", "", LowerIsFaster, 1, func(m record.Measures) *float64 { return m.PagesReadPerOp }, nil},
	{"cache peak MB", "", Neutral, 1e-6, func(m record.Measures) *float64 { return m.CachePeak }, nil},
	{"dirty peak MB", "", Neutral, 1e-6, func(m record.Measures) *float64 { return m.DirtyPeak }, nil},
	{"app evict ms", "", LowerIsFaster, 1e-3, func(m record.Measures) *float64 { return m.AppEvictMicros }, nil},
	// The measures of a server wtd did not load (an imported run's),
	// from its steps' per-second server figures.
	{"read latency ms", "", LowerIsFaster, 1e-3, func(m record.Measures) *float64 { return m.ReadLatencyMicros },
		serverSeconds(func(s *record.ServerSeconds) *record.ServerSeries { return s.ReadLatency })},
	{"write latency ms", "", LowerIsFaster, 1e-3, func(m record.Measures) *float64 { return m.WriteLatencyMicros },
		serverSeconds(func(s *record.ServerSeconds) *record.ServerSeries { return s.WriteLatency })},
	{"pages read/s", "", LowerIsFaster, 1, func(m record.Measures) *float64 { return m.PagesReadPerSec },
		serverSeconds(func(s *record.ServerSeconds) *record.ServerSeries { return s.PagesRead })},
	{"app evict ms/s", "", LowerIsFaster, 1e-3, func(m record.Measures) *float64 { return m.AppEvictMicrosPerSec },
		serverSeconds(func(s *record.ServerSeconds) *record.ServerSeries { return s.AppEvict })},
	{"cache MB", "", Neutral, 1e-6, func(m record.Measures) *float64 { return m.CacheMean },
		serverSeconds(func(s *record.ServerSeconds) *record.ServerSeries { return s.Cache })},
	{"dirty MB", "", Neutral, 1e-6, func(m record.Measures) *float64 { return m.DirtyMean },
		serverSeconds(func(s *record.ServerSeconds) *record.ServerSeries { return s.Dirty })},
}

// opsSeconds are a step's operations in each second: its workload's, or
// for a step over a server wtd did not load, the server's.
func opsSeconds(st record.StepRecord) []float64 {
	if ops, _ := fullSeconds(st); ops != nil {
		return ops
	}
	if st.ServerSeconds != nil && record.MeasuresOf(st).OpsPerSec != nil {
		return st.ServerSeconds.Ops.PerSecond()
	}
	return nil
}

func p99Seconds(st record.StepRecord) []float64 {
	_, p99 := fullSeconds(st)
	return p99
}

// serverSeconds returns the measured seconds of one of a step's server
// series.
func serverSeconds(of func(*record.ServerSeconds) *record.ServerSeries) func(record.StepRecord) []float64 {
	return func(st record.StepRecord) []float64 {
		if st.ServerSeconds == nil {
			return nil
		}
		return of(st.ServerSeconds).PerSecond()
	}
}

// side is the steps of one run that a row compares.
type side struct {
	steps []record.StepRecord
}

// fullSeconds returns a step's per-second series without its warm-up, like
// its summary figures, and without its last second, which is partial.
func fullSeconds(st record.StepRecord) (ops, p99 []float64) {
	ops, p99 = record.MeasuredSecondSeries(st)
	if n := len(ops); n > 1 {
		ops, p99 = ops[:n-1], p99[:n-1]
	}
	return ops, p99
}

// values returns the value of m for a row (the median over the steps) and
// the repeated values to test: the per-second series of all the steps
// together when m has one, else one value per step.
func (s side) values(m measure) (*float64, []float64) {
	var vals, perSecond []float64
	for _, st := range s.steps {
		if v := m.value(record.MeasuresOf(st)); v != nil {
			vals = append(vals, *v*m.scale)
		}
		if m.series != nil {
			for _, v := range m.series(st) {
				perSecond = append(perSecond, v*m.scale)
			}
		}
	}
	if len(vals) == 0 {
		return nil, nil
	}
	med := Median(vals)
	if len(perSecond) > 0 {
		return &med, perSecond
	}
	return &med, vals
}

func seqs(steps []record.StepRecord) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.Seq
	}
	return out
}

// matchKey identifies a step across runs: name and all labels but those
// in skip (and what changed at an imported step's start,
// record.StepRecord.MatchTitle), with an occurrence number when a run
// repeats the same name and labels.
func matchKeys(steps []record.StepRecord, skip map[string]bool) ([]string, map[string]record.StepRecord) {
	seen := map[string]int{}
	var order []string
	byKey := map[string]record.StepRecord{}
	for _, st := range steps {
		k := keyWithout(st, skip)
		seen[k]++
		if seen[k] > 1 {
			k += fmt.Sprintf(" #%d", seen[k])
		}
		order = append(order, k)
		byKey[k] = st
	}
	return order, byKey
}

// Records compares run b with run a from their records.
func Records(a, b *record.Record, opt Options) *Result {
	opt = opt.withDefaults()
	across := acrossLabels(a, b, opt.IgnoreLabels)
	skip, params := map[string]bool{}, map[string]bool{}
	for _, x := range across {
		skip[x.Label] = true
		if x.Parameter != "" {
			params[x.Parameter] = true
		}
	}
	res := &Result{A: refOf(a), B: refOf(b), Reasons: reasons(a, b, params), Alpha: opt.Alpha, MinChange: opt.MinChange, Test: opt.Test,
		Steps: []StepRow{}, OnlyInA: []string{}, OnlyInB: []string{}, Across: across}
	if res.Reasons == nil {
		res.Reasons = []string{}
	}
	res.Comparable = len(res.Reasons) == 0
	res.Forced = !res.Comparable && opt.Force
	judged := res.Comparable || opt.Force

	orderA, stepsA := matchKeys(a.Steps, skip)
	orderB, stepsB := matchKeys(b.Steps, skip)
	for _, k := range orderB {
		if _, ok := stepsA[k]; !ok {
			res.OnlyInB = append(res.OnlyInB, k)
		}
	}
	groupsA, groupsB := map[string][]record.StepRecord{}, map[string][]record.StepRecord{}
	var groupOrder []string
	for _, k := range orderA {
		sa := stepsA[k]
		sb, ok := stepsB[k]
		if !ok {
			res.OnlyInA = append(res.OnlyInA, k)
			continue
		}
		res.Steps = append(res.Steps, compareRow(keyWithout(sa, skip), without(sa, skip), []record.StepRecord{sa}, []record.StepRecord{sb}, false, judged, res, opt))
		if _, hasRound := sa.Labels["round"]; hasRound && sa.Status == record.StatusOK && sb.Status == record.StatusOK {
			g := record.RepetitionKey(sa)
			if _, ok := groupsA[g]; !ok {
				groupOrder = append(groupOrder, g)
			}
			groupsA[g] = append(groupsA[g], sa)
			groupsB[g] = append(groupsB[g], sb)
		}
	}
	for _, g := range groupOrder {
		if len(groupsA[g]) < 2 {
			continue
		}
		first := without(groupsA[g][0], skip)
		res.Steps = append(res.Steps, compareRow(withoutRound(first).Title()+", all rounds", first, groupsA[g], groupsB[g], true, judged, res, opt))
	}
	keepMeasures(res, opt.Measures)
	return res
}

// keepMeasures keeps only the named measures in the rows of res (all when
// names is empty).
func keepMeasures(res *Result, names []string) {
	if len(names) == 0 {
		return
	}
	keep := map[string]bool{}
	for _, name := range names {
		if m, err := measureNamed(name); err == nil {
			keep[m.name], keep[m.loadName] = true, m.loadName != ""
		}
	}
	for i := range res.Steps {
		rows := res.Steps[i].Measures[:0]
		for _, mr := range res.Steps[i].Measures {
			if keep[mr.Measure] {
				rows = append(rows, mr)
			}
		}
		res.Steps[i].Measures = rows
	}
}

// CheckMeasures returns an error naming the first unknown measure.
func CheckMeasures(names []string) error {
	for _, n := range names {
		if _, err := measureNamed(n); err != nil {
			return err
		}
	}
	return nil
}

// withoutRound is st with its round label taken away.
func withoutRound(st record.StepRecord) record.StepRecord {
	labels := map[string]any{}
	for k, v := range st.Labels {
		if k != "round" {
			labels[k] = v
		}
	}
	st.Labels = labels
	return st
}

func compareRow(title string, first record.StepRecord, a, b []record.StepRecord, rounds, judged bool, res *Result, opt Options) StepRow {
	labels := first.Labels
	if rounds {
		labels = withoutRound(first).Labels
	}
	row := StepRow{Step: title, Name: first.Name, Labels: labels, Rounds: rounds, SeqA: seqs(a), SeqB: seqs(b), Measures: []MeasureRow{}}
	for _, busy := range []string{hostBusy(res.A, a), hostBusy(res.B, b)} {
		if busy != "" {
			row.HostBusy = append(row.HostBusy, busy)
		}
	}
	failed := ""
	for _, s := range a {
		if s.Status != record.StatusOK {
			failed = fmt.Sprintf("step %d of %s %s", s.Seq, res.A.Name(), s.Status)
		}
	}
	for _, s := range b {
		if s.Status != record.StatusOK && failed == "" {
			failed = fmt.Sprintf("step %d of %s %s", s.Seq, res.B.Name(), s.Status)
		}
	}
	load := record.MeasuresOf(first).Load
	sa, sb := side{a}, side{b}
	for _, m := range measures {
		va, ta := sa.values(m)
		vb, tb := sb.values(m)
		if va == nil && vb == nil {
			continue
		}
		name := m.name
		if load && m.loadName != "" {
			name = m.loadName
		}
		mr := MeasureRow{Measure: name, A: va, B: vb}
		if va != nil && vb != nil && *va != 0 {
			pct := 100 * (*vb / *va - 1)
			mr.ChangePct = &pct
		}
		switch {
		case !judged:
			mr.Verdict, mr.Test = NotComparable, "the runs are not comparable"
		case failed != "":
			mr.Verdict, mr.Test = NotComparable, failed
		case va == nil || vb == nil:
			mr.Verdict, mr.Test = NotComparable, "measured in one run only"
		default:
			mr.Judgement = Judge(ta, tb, m.better, opt.Alpha, opt.Test)
			if mr.Verdict != NoDifference && mr.ChangePct != nil && math.Abs(*mr.ChangePct) < 100*opt.MinChange {
				mr.Verdict, mr.Small = NoDifference, true
			}
		}
		row.Measures = append(row.Measures, mr)
	}
	switch {
	case !judged:
		row.Verdict, row.Note = NotComparable, strings.Join(res.Reasons, "; ")
	case failed != "":
		row.Verdict, row.Note = NotComparable, failed
	default:
		row.Verdict, row.Note = NoDifference, "no throughput measured"
		for _, mr := range row.Measures {
			if mr.Measure == measures[0].name || mr.Measure == measures[0].loadName {
				row.Verdict, row.Note = mr.Verdict, ""
			}
		}
	}
	return row
}

// SlowerFaster names the steps judged slower and faster.
func (r *Result) SlowerFaster() (slower, faster []string) {
	for _, s := range r.Steps {
		switch s.Verdict {
		case Slower:
			slower = append(slower, s.Step)
		case Faster:
			faster = append(faster, s.Step)
		}
	}
	return slower, faster
}

// FormatValue prints a measure's value with the precision its size calls
// for (record.Dash when it was not measured), as wtd compare and the
// report show it: 108512 as "108512", not "1.085e+05".
func FormatValue(v *float64) string {
	if v == nil {
		return record.Dash
	}
	switch a := math.Abs(*v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", *v)
	case a >= 10:
		return fmt.Sprintf("%.1f", *v)
	case a >= 0.1:
		return fmt.Sprintf("%.3f", *v)
	}
	return fmt.Sprintf("%.4g", *v)
}

// VerdictText is the measure's verdict as a table shows it: "no
// difference (< 5%)" for a significant change smaller than minChange.
func (m MeasureRow) VerdictText(minChange float64) string {
	if m.Small {
		return fmt.Sprintf("%s (< %g%%)", m.Verdict, 100*minChange)
	}
	return m.Verdict
}

// Cells are a measure's change and evidence as wtd compare and the report
// show them: the change in percent (record.Dash when there is none), the
// values a side ("NA/NB") and the test's p-value, confidence interval of
// the change or "no test"; n and evidence are empty when nothing was
// tested.
func (m MeasureRow) Cells() (change, n, evidence string) {
	change = record.Dash
	if m.ChangePct != nil {
		change = fmt.Sprintf("%+.1f%%", *m.ChangePct)
	}
	switch {
	case m.P != nil:
		n, evidence = fmt.Sprintf("%d/%d", m.NA, m.NB), fmt.Sprintf("%.3g", *m.P)
	case m.CI != nil:
		n, evidence = fmt.Sprintf("%d/%d", m.NA, m.NB), fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*m.CI[0], 100*m.CI[1])
	case m.Verdict == NoDifference:
		n, evidence = fmt.Sprintf("%d/%d", m.NA, m.NB), "no test"
	}
	return change, n, evidence
}

// VerdictLine is one line of a comparison's verdict: its kind (Slower,
// Faster or NoDifference) and its text.
type VerdictLine struct{ Kind, Text string }

// VerdictLines are the comparison's verdict: no difference (when the runs
// were compared), then the slower steps, then the faster ones, in ops/s.
func (r *Result) VerdictLines() []VerdictLine {
	var out []VerdictLine
	slower, faster := r.SlowerFaster()
	if len(slower)+len(faster) == 0 && (r.Comparable || r.Forced) {
		out = append(out, VerdictLine{NoDifference, fmt.Sprintf("no step is faster or slower in ops/s at alpha %g by %g%% or more", r.Alpha, 100*r.MinChange)})
	}
	if len(slower) > 0 {
		out = append(out, VerdictLine{Slower, "slower in ops/s: " + strings.Join(slower, "; ")})
	}
	if len(faster) > 0 {
		out = append(out, VerdictLine{Faster, "faster in ops/s: " + strings.Join(faster, "; ")})
	}
	seen := map[string]bool{}
	for _, s := range r.Steps {
		for _, b := range s.HostBusy {
			if !seen[b] && (s.Verdict == Faster || s.Verdict == Slower) {
				seen[b] = true
				out = append(out, VerdictLine{NotReliable, "host busy during " + b + ": verdict not reliable"})
			}
		}
	}
	return out
}

package record

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"wtd/engine/store"
	"wtd/engine/workload"
)

// ReportOptions shape the step table.
type ReportOptions struct {
	// By names the label (or settings field such as cacheSizeGB) that
	// groups rows; its column comes first.
	By string
	// Title is printed above the table.
	Title string
	// Verdict adds a column with each step's comparison against the
	// steps of By's first value (baseline, "faster +99.8% (p 0.00216)"),
	// from compare's tests; it needs By.
	Verdict bool
}

// byJudge words each step's comparison by a label (step seq -> cell); the
// statistics live in package compare, which sets it (SetByJudge).
var byJudge func(steps []StepRecord, by string) (base string, cells map[int]string)

// SetByJudge sets how the verdict column of a table is filled: package
// compare calls it when it is loaded.
func SetByJudge(f func(steps []StepRecord, by string) (base string, cells map[int]string)) {
	byJudge = f
}

func sortedLabelKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LabelValue is the value of by for a step: its label of that name, else
// the setting of that name in force (an option, a server parameter or a
// key of engineConfig, in any case), else the server parameter read at
// the step, else for cacheSizeGB the cache's size in GB; "" when the step
// has none of them.
func LabelValue(st StepRecord, by string) string {
	if v, ok := st.Labels[by]; ok {
		return fmt.Sprint(v)
	}
	if st.Settings == nil {
		return ""
	}
	if v, ok := st.Settings.Value(by); ok {
		return v
	}
	for k, v := range st.Settings.Parameters {
		if strings.EqualFold(k, by) {
			return fmt.Sprint(v)
		}
	}
	switch strings.ToLower(by) {
	case "cachesizegb", "cache_size_gb":
		if st.Settings.CacheMaxBytes > 0 {
			return fmt.Sprintf("%.2f", float64(st.Settings.CacheMaxBytes)/(1<<30))
		}
	}
	return ""
}

// stepNumbers are the figures of one step that the table shows. For a
// load, p50 and p99 are per batch of documents, not per operation.
type stepNumbers struct {
	ops, opsPerSec, p50, p99 float64
	hasOps, load             bool
}

func numbersOf(st StepRecord) stepNumbers {
	switch r := st.Result.(type) {
	case workload.Result:
		return stepNumbers{float64(r.Total.Count), r.Total.OpsPerSec, r.Total.P50Micros, r.Total.P99Micros, true, false}
	case *workload.Result:
		return stepNumbers{float64(r.Total.Count), r.Total.OpsPerSec, r.Total.P50Micros, r.Total.P99Micros, true, false}
	case workload.LoadResult:
		return stepNumbers{float64(r.Docs), r.DocsPerSec, r.Batch.P50Micros, r.Batch.P99Micros, true, true}
	case *workload.LoadResult:
		return stepNumbers{float64(r.Docs), r.DocsPerSec, r.Batch.P50Micros, r.Batch.P99Micros, true, true}
	case map[string]any:
		if t, ok := r["total"].(map[string]any); ok {
			n := stepNumbers{hasOps: true}
			n.ops, _ = t["count"].(float64)
			n.opsPerSec, _ = t["ops_per_sec"].(float64)
			n.p50, _ = t["p50_micros"].(float64)
			n.p99, _ = t["p99_micros"].(float64)
			return n
		}
		if b, ok := r["batch"].(map[string]any); ok && IsLoad(r) {
			n := stepNumbers{hasOps: true, load: true}
			n.ops, _ = r["docs"].(float64)
			n.opsPerSec, _ = r["docs_per_sec"].(float64)
			n.p50, _ = b["p50_micros"].(float64)
			n.p99, _ = b["p99_micros"].(float64)
			return n
		}
	}
	return stepNumbers{}
}

// Dash stands for a value that was not measured.
const Dash = "–"

// FmtOpt formats an optional value scaled by div, Dash when nil (not
// measured).
func FmtOpt(v *float64, format string, div float64) string {
	if v == nil {
		return Dash
	}
	return fmt.Sprintf(format, *v/div)
}

// deltaCells are the server-side columns of a step's row.
func deltaCells(st StepRecord) []any {
	d := st.Server
	if d == nil {
		return []any{"", "", "", "", ""}
	}
	return []any{FmtOpt(d.PagesRead, "%.0f", 1), FmtOpt(MeasuresOf(st).PagesReadPerOp, "%.2f", 1), FmtOpt(d.CacheUsedPeak, "%.1f", 1e6),
		FmtOpt(d.DirtyPeak, "%.1f", 1e6), FmtOpt(d.AppEvictMicros, "%.1f", 1000)}
}

// WriteReport prints the steps as an aligned table: one row per step, then
// one row per repeated step name with min/median/max of ops/s. Figures that
// were not measured show as "–"; a load's latencies are per batch and have
// their own columns.
func WriteReport(w io.Writer, steps []StepRecord, opt ReportOptions) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	if opt.Title != "" {
		t.SetTitle(opt.Title)
	}
	anyLoad := false
	for _, st := range steps {
		anyLoad = anyLoad || numbersOf(st).load
	}
	header := table.Row{}
	if opt.By != "" {
		header = append(header, opt.By)
	}
	header = append(header, "step", "round", "status", "ops", "ops/s", "p50 ms", "p99 ms")
	if anyLoad {
		header = append(header, "batch p50 ms", "batch p99 ms")
	}
	header = append(header, "pages read", "pages read/op", "cache peak MB", "dirty peak MB", "app evict ms", "verdict")
	var vs map[int]string
	if opt.Verdict && opt.By != "" && byJudge != nil {
		base, cells := byJudge(steps, opt.By)
		if base != "" {
			vs = cells
			header = append(header, "vs "+opt.By+"="+base)
		}
	}
	t.AppendHeader(header)
	groups := map[string][]float64{}
	var order []string
	for _, st := range steps {
		row := table.Row{}
		if opt.By != "" {
			row = append(row, LabelValue(st, opt.By))
		}
		n := numbersOf(st)
		round := ""
		if v, ok := st.Labels["round"]; ok {
			round = fmt.Sprint(v)
		}
		row = append(row, st.Name, round, st.Status)
		lat := []string{fmt.Sprintf("%.3f", n.p50/1000), fmt.Sprintf("%.3f", n.p99/1000)}
		switch {
		case !n.hasOps:
			row = append(row, "", "", "", "")
			if anyLoad {
				row = append(row, "", "")
			}
		case n.load:
			row = append(row, fmt.Sprintf("%.0f", n.ops), fmt.Sprintf("%.0f", n.opsPerSec), "", "", lat[0], lat[1])
		default:
			row = append(row, fmt.Sprintf("%.0f", n.ops), fmt.Sprintf("%.0f", n.opsPerSec), lat[0], lat[1])
			if anyLoad {
				row = append(row, "", "")
			}
		}
		if n.hasOps {
			key := LabelValue(st, opt.By) + "\x00" + st.Name
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], n.opsPerSec)
		}
		row = append(row, deltaCells(st)...)
		verdict := ""
		if st.Provenance != nil {
			verdict = st.Provenance.Verdict
		}
		row = append(row, verdict)
		if vs != nil {
			c, ok := vs[st.Seq]
			if !ok {
				c = Dash
			}
			row = append(row, c)
		}
		t.AppendRow(row)
	}
	t.Render()
	var summary [][]string
	for _, key := range order {
		vals := groups[key]
		if len(vals) < 2 {
			continue
		}
		by, name, _ := strings.Cut(key, "\x00")
		s := Summarise(vals)
		summary = append(summary, []string{by, name, fmt.Sprint(s.N), fmt.Sprintf("%.0f", s.Min), fmt.Sprintf("%.0f", s.Median), fmt.Sprintf("%.0f", s.Max)})
	}
	if len(summary) == 0 {
		return
	}
	st := table.NewWriter()
	st.SetOutputMirror(w)
	st.SetStyle(table.StyleLight)
	st.SetTitle("repetitions (ops/s)")
	h := table.Row{}
	if opt.By != "" {
		h = append(h, opt.By)
	}
	st.AppendHeader(append(h, "step", "n", "min", "median", "max"))
	for _, s := range summary {
		row := table.Row{}
		if opt.By != "" {
			row = append(row, s[0])
		}
		for _, c := range s[1:] {
			row = append(row, c)
		}
		st.AppendRow(row)
	}
	st.SetColumnConfigs([]table.ColumnConfig{{Number: 3, Align: text.AlignRight}})
	st.Render()
}

// Event sources of what a playbook writes itself. Its print() and
// io.write() output is part of the record, one event per line, beside its
// log() lines (source "playbook") and wtd's own events; a report.table call
// is recorded as what it drew, so the table can be redrawn from the
// database.
const (
	SourcePrint = "print"
	SourceTable = "report.table"
)

// TableOf reads a report.table event: the options and how many of the
// run's steps the table showed.
func TableOf(ev store.Event) (ReportOptions, int, bool) {
	if ev.Source != SourceTable {
		return ReportOptions{}, 0, false
	}
	var opt ReportOptions
	opt.By, _ = ev.Attrs["by"].(string)
	opt.Title, _ = ev.Attrs["title"].(string)
	opt.Verdict, _ = ev.Attrs["verdict"].(bool)
	n, _ := ev.Attrs["steps"].(float64)
	return opt, int(n), true
}

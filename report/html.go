package report

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
)

var (
	//go:embed assets/uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uplot/uPlot.min.css
	uplotCSS string
	//go:embed charts.js
	chartsJS string
	//go:embed style.css
	styleCSS string
	//go:embed page.html.tmpl
	pageTemplate string

	page = template.Must(template.New("page").Parse(pageTemplate))
)

// WriteHTML writes the report of runs ids (one run, or several overlaid
// and compared with the first) as one self-contained HTML page. It is what
// wtd report writes and what an HTTP handler can serve.
func WriteHTML(ctx context.Context, st *store.Store, w io.Writer, ids ...int64) error {
	m, err := Load(ctx, st, ids...)
	if err != nil {
		return err
	}
	return m.WriteHTML(w, compare.Options{})
}

type pageData struct {
	Title  string
	Header template.HTML
	CSS    template.CSS
	chartsView
	Runs        []runView
	Comparisons []comparisonView
}

// chartsView is what draws charts in a page: a place per chart, their
// data and the scripts.
type chartsView struct {
	UplotJS, ChartsJS, Data template.JS
	UplotCSS                template.CSS
	Charts                  []Chart
}

// newChartsView lays out charts with their data (chartJSON).
func newChartsView(seconds float64, runs []int64, charts []Chart) (chartsView, error) {
	data, err := chartJSON(seconds, runs, charts)
	if err != nil {
		return chartsView{}, err
	}
	return chartsView{UplotJS: template.JS(uplotJS), ChartsJS: template.JS(chartsJS), UplotCSS: template.CSS(uplotCSS),
		Data: template.JS(data), Charts: charts}, nil
}

// ChartsHTML renders charts as a report draws them: per chart its title,
// note and the place uPlot draws it in, then their data and the scripts
// (uPlot and the report's, inlined: nothing is fetched). It is an HTML
// fragment for a page styled with Style, one such fragment a page; charts
// on the time axis of a run are not for it (they take their run's bounds
// from a Model).
func ChartsHTML(charts []Chart) (template.HTML, error) {
	v, err := newChartsView(0, nil, charts)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := page.ExecuteTemplate(&b, "charts", v); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

type runView struct {
	ID                                          int64
	Playbook, Status, Reason, Started, Duration string
	Trigger, Params, SHA, Host, Wtd, Samples    string
	Servers                                     []serverView
	FieldNames                                  []string
	Steps                                       []stepView
	Tables                                      []tableView
	Output                                      string
}

type serverView struct{ Name, URI, Version, GitVersion, How string }

type stepView struct {
	Seq                                                    int
	Title, Status, Start, Duration, Verdict, Reason, Error string
	Fields                                                 []record.Field
}

type tableView struct{ Title, Text string }

type comparisonView struct {
	*compare.Result
	// Heading names what was compared; ColA and ColB head the value
	// columns: the runs, or the values of a label within one run.
	Heading, ColA, ColB string
	// Matched says which labels the matching left out.
	Matched  []string
	TestText string
	Rows     []rowView
	Summary  []summaryLine
	// Caveats are the verdict lines that qualify the verdict: a host
	// busy with other work during a compared step.
	Caveats []string
}

// summaryLine is a last line of a comparison, as wtd compare ends it: the
// steps slower or faster in ops/s, or that none is.
type summaryLine struct{ Word, Text string }

type rowView struct{ Step, Measure, A, B, Change, N, Evidence, Verdict, VerdictText string }

// WriteHTML renders the model; runs after the first are compared with it
// using opt.
func (m *Model) WriteHTML(w io.Writer, opt compare.Options) error {
	return m.WritePage(w, PageOptions{Compare: opt})
}

// PageOptions shape a report page.
type PageOptions struct {
	// Compare is how runs after the first are compared with it.
	Compare compare.Options
	// Header is put first in the page's body (e.g. the links of the
	// daemon's dashboard); it must fetch nothing.
	Header template.HTML
	// By adds, for each run, the comparison of the steps of each value of
	// this label or setting with those of its first value (compare.By).
	// A table the playbook printed with verdict = true adds its own.
	By string
}

// WritePage renders the model as WriteHTML does, with opt's header.
func (m *Model) WritePage(w io.Writer, popt PageOptions) error {
	opt := popt.Compare
	d := pageData{Header: popt.Header, CSS: template.CSS(styleCSS)}
	var titles []string
	for _, rec := range m.Records {
		d.Runs = append(d.Runs, viewRun(rec))
		titles = append(titles, fmt.Sprintf("run %d", rec.Run.ID))
	}
	d.Title = "wtd report: " + strings.Join(titles, " and ") + " (" + m.Records[0].Run.PlaybookPath + ")"
	for _, rec := range m.Records {
		for _, by := range byLabels(rec, popt.By) {
			r, err := compare.By(rec, by, opt)
			if err != nil && by == popt.By {
				return fmt.Errorf("--by: %w", err)
			}
			if err == nil {
				d.Comparisons = append(d.Comparisons, viewComparison(r))
			}
		}
	}
	for _, rec := range m.Records[1:] {
		d.Comparisons = append(d.Comparisons, viewComparison(compare.Records(m.Records[0], rec, opt)))
	}
	var err error
	if d.chartsView, err = newChartsView(m.seconds(), m.runIDs(), m.Charts); err != nil {
		return err
	}
	return page.Execute(w, d)
}

func viewRun(rec *record.Record) runView {
	r := rec.Run
	v := runView{ID: r.ID, Playbook: r.PlaybookPath, Status: r.Status, Reason: r.Reason,
		Started: r.StartedAt.Local().Format("2006-01-02 15:04:05 MST"), Duration: since(r.StartedAt, r.EndedAt),
		Trigger: r.Trigger, Params: record.ParamsShort(r.Params), SHA: r.PlaybookSHA256, Host: record.HostShort(r.Host),
		Wtd: r.WtdVersion, Samples: fmt.Sprintf("%d (%s)", rec.Samples, strings.Join(rec.Sources, ", "))}
	for _, s := range rec.Servers {
		v.Servers = append(v.Servers, serverView{s.Name, s.URI, s.Version, s.GitVersion, record.ServerHow(s)})
	}
	for _, s := range rec.Steps {
		sv := stepView{Seq: s.Seq, Title: s.Title(), Status: s.Status, Start: fmt.Sprintf("+%.2fs", s.Start.Sub(r.StartedAt).Seconds()),
			Duration: since(s.Start, s.End), Error: s.Error, Fields: rec.Fields(s)}
		if s.Provenance != nil {
			sv.Verdict, sv.Reason = s.Provenance.Verdict, s.Provenance.Reason
		}
		if v.FieldNames == nil {
			for _, f := range sv.Fields {
				v.FieldNames = append(v.FieldNames, f.Name)
			}
		}
		v.Steps = append(v.Steps, sv)
	}
	for _, t := range rec.Tables() {
		v.Tables = append(v.Tables, tableView{t.Options.Title, t.Text()})
	}
	var out strings.Builder
	for _, ev := range rec.Events {
		at := ev.TS.Sub(r.StartedAt).Seconds()
		switch {
		case ev.Source == record.SourceTable:
			fmt.Fprintf(&out, "%+8.2fs  (report.table: shown above)\n", at)
		case ev.Source == record.SourcePrint:
			fmt.Fprintf(&out, "%+8.2fs  %s\n", at, ev.Message)
		default:
			fmt.Fprintf(&out, "%+8.2fs  %-5s %-8s %s\n", at, ev.Level, ev.Source, ev.Message)
		}
	}
	v.Output = out.String()
	return v
}

func since(start, end time.Time) string {
	if end.IsZero() {
		return "–"
	}
	return end.Sub(start).Round(10 * time.Millisecond).String()
}

// byLabels are the labels a run's report compares its steps by: by, then
// those of the tables the playbook printed with verdict = true.
func byLabels(rec *record.Record, by string) []string {
	var out []string
	if by != "" {
		out = append(out, by)
	}
	for _, t := range rec.Tables() {
		if t.Options.Verdict && t.Options.By != "" && !slices.Contains(out, t.Options.By) {
			out = append(out, t.Options.By)
		}
	}
	return out
}

func viewComparison(r *compare.Result) comparisonView {
	v := comparisonView{Result: r, Heading: "R" + r.B.Name()[1:] + " compared with " + r.A.Name(),
		ColA: r.A.Name(), ColB: r.B.Name()}
	for _, a := range r.AcrossText() {
		v.Matched = append(v.Matched, "Steps matched across "+a+".")
	}
	if r.By != nil {
		v.Heading = fmt.Sprintf("Run %d: the steps of each %s compared with %s=%s", r.A.ID, r.By.Label, r.By.Label, r.By.Base)
		v.ColA, v.ColB = r.By.Label+"="+r.By.Base, "the step's value"
		if len(r.By.Alongside) > 0 {
			v.Matched = []string{"Labels that change with " + r.By.Label + ", left out of the matching: " + strings.Join(r.By.Alongside, ", ") + "."}
		}
	}
	v.TestText = fmt.Sprintf("Mann-Whitney U at alpha %g on per-second values (ops/s, p99, an import's server figures) or one value per round; fewer than 3 values a side: no test.", r.Alpha)
	if r.Test == compare.TestBootstrap {
		v.TestText = fmt.Sprintf("Bootstrap interval of the median's change at alpha %g on per-second values (ops/s, p99, an import's server figures) or one value per round.", r.Alpha)
	}
	v.TestText += fmt.Sprintf(" A difference needs a change of at least %g%%.", 100*r.MinChange)
	for _, s := range r.Steps {
		for j, m := range s.Measures {
			row := rowView{Measure: m.Measure, A: compare.FormatValue(m.A), B: compare.FormatValue(m.B), Verdict: m.Verdict, VerdictText: r.CellVerdict(s, m)}
			if j == 0 {
				row.Step = s.Step
			}
			row.Change, row.N, row.Evidence = m.Cells()
			v.Rows = append(v.Rows, row)
		}
	}
	if !r.Comparable && !r.Forced {
		v.Summary = append(v.Summary, summaryLine{"not-comparable", "not comparable"})
	}
	for _, l := range r.VerdictLines() {
		if l.Kind == compare.NotReliable {
			v.Caveats = append(v.Caveats, l.Text)
			continue
		}
		// The kind is the line's class: "no difference" -> no-difference.
		v.Summary = append(v.Summary, summaryLine{strings.ReplaceAll(l.Kind, " ", "-"), l.Text})
	}
	return v
}

// ComparisonHTML renders a comparison as the report shows it (and as wtd
// compare prints it): whether the runs are comparable, the test, the table
// of steps and measures and the verdict lines. It is an HTML fragment for a
// page styled with Style.
func ComparisonHTML(r *compare.Result) (template.HTML, error) {
	var b bytes.Buffer
	if err := page.ExecuteTemplate(&b, "comparison", viewComparison(r)); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// Style is the reports' style sheet, for pages that show parts of them.
func Style() template.CSS { return template.CSS(styleCSS) }

// seconds is how long the longest of the model's runs lasted (until now
// for one still running), rounded up: the span of its charts in time.
func (m *Model) seconds() float64 {
	secs := 0.0
	for _, rec := range m.Records {
		end := rec.Run.EndedAt
		if end.IsZero() {
			end = time.Now()
		}
		secs = math.Max(secs, end.Sub(rec.Run.StartedAt).Seconds())
	}
	return math.Ceil(secs)
}

func (m *Model) runIDs() []int64 {
	var ids []int64
	for _, rec := range m.Records {
		ids = append(ids, rec.Run.ID)
	}
	return ids
}

// chartJSON writes the charts' data: the seconds charts in time span, the
// runs, and per chart its id, unit, x label ("" for the time axis), the
// number of series, per run its x values, series labels and y values (null
// for a gap), the step bounds, for a heatmap its buckets' edges ("heat"),
// and the points marked ("marks").
func chartJSON(seconds float64, runs []int64, charts []Chart) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"seconds":%.3f,"runs":[`, seconds)
	for i, id := range runs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteString(`],"charts":[`)
	for i, c := range charts {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%s,"unit":%s,"xlabel":%s,"xlog":%t,"xwhole":%t,"xtime":%t,"series":%d,"runs":[`, jsonString(c.ID), jsonString(c.Unit), jsonString(c.XLabel), c.XLog, c.XWhole, c.XTime, c.SeriesCount())
		for j, r := range c.Runs {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"run":%d,"x":`, r.Run)
			numbers(&b, r.X, -3)
			b.WriteString(`,"labels":[`)
			for k, s := range r.Series {
				if k > 0 {
					b.WriteByte(',')
				}
				b.WriteString(jsonString(s.Label))
			}
			b.WriteString(`],"styles":[`)
			for k, s := range r.Series {
				if k > 0 {
					b.WriteByte(',')
				}
				b.WriteString(jsonString(s.Style))
			}
			b.WriteString(`],"colours":[`)
			for k, s := range r.Series {
				if k > 0 {
					b.WriteByte(',')
				}
				b.WriteString(jsonString(s.Colour))
			}
			b.WriteString(`],"y":[`)
			for k, s := range r.Series {
				if k > 0 {
					b.WriteByte(',')
				}
				numbers(&b, s.Y, 4)
			}
			b.WriteString(`]}`)
		}
		b.WriteString(`],"bounds":[`)
		for j, bd := range c.Bounds {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"run":%d,"seq":%d,"start":%.3f,"end":%.3f,"label":%s}`, bd.Run, bd.Seq, bd.Start, bd.End, jsonString(bd.Label))
		}
		b.WriteString(`]`)
		if len(c.Heat) > 0 {
			b.WriteString(`,"heat":`)
			numbers(&b, c.Heat, 6)
		}
		if len(c.Marks) > 0 {
			b.WriteString(`,"marks":[`)
			for j, mk := range c.Marks {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"run":%d,"kind":%s,"label":%s,"x":`, mk.Run, jsonString(mk.Kind), jsonString(mk.Label))
				number(&b, mk.X, -3)
				b.WriteString(`,"y":`)
				number(&b, mk.Y, 4)
				b.WriteString(`}`)
			}
			b.WriteString(`]`)
		}
		b.WriteString(`}`)
	}
	b.WriteString(`]}`)
	return b.Bytes(), nil
}

// numbers writes a JSON array of values, each as number writes it.
func numbers(b *bytes.Buffer, vals []float64, digits int) {
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		number(b, v, digits)
	}
	b.WriteByte(']')
}

// number writes v rounded to digits significant digits, or to -digits
// decimals when digits < 0 (NaN and infinities as null).
func number(b *bytes.Buffer, v float64, digits int) {
	var tmp [32]byte
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		b.WriteString("null")
	case digits < 0:
		b.Write(strconv.AppendFloat(tmp[:0], math.Round(v*1000)/1000, 'f', -1, 64))
	default:
		b.Write(appendRounded(tmp[:0], v, digits))
	}
}

// appendRounded appends v with at least digits significant digits, and
// whole numbers in full (no exponent).
func appendRounded(dst []byte, v float64, digits int) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendInt(dst, int64(v), 10)
	}
	mag := int(math.Floor(math.Log10(math.Abs(v))))
	dec := max(digits-1-mag, 0)
	return strconv.AppendFloat(dst, v, 'f', dec, 64)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Package report renders recorded runs as one self-contained HTML page:
// the run's header, the provenance of every step, the summary tables, and
// time-series charts with the steps marked (uPlot, vendored under
// assets/uplot and inlined, so a report opens offline). Two runs or more
// are overlaid, with their comparison. Everything comes from the results
// database; nothing is fetched.
package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
)

// Series is one line of a chart for one run.
type Series struct {
	Label string
	Y     []float64 // NaN: a gap
	Style string    // "" a line, StylePoints or StyleStep
	// Colour is the series' colour, one of charts.js's palette; "" the
	// palette's next.
	Colour string
}

// RunData is what a chart shows of one run: its x values (seconds since
// the run started) and its series.
type RunData struct {
	Run    int64
	X      []float64
	Series []Series
}

// Bound marks a step on a chart: from Start to End seconds after its run
// started.
type Bound struct {
	Run        int64
	Seq        int
	Start, End float64
	Label      string
}

// Chart is one time-series chart, or with an XLabel one against another
// quantity (threads, a tune{} search's trials or a knob's value), drawn
// without the steps, on a log scale with XLog.
type Chart struct {
	ID, Title, Unit, Note string
	XLabel                string
	XLog                  bool
	XWhole                bool // the x values are whole numbers (trials)
	// XTime: the x values are times (Unix seconds, such as runs' starts),
	// drawn as dates; a null is a gap in the line, not spanned.
	XTime bool
	// Marks are points marked on the chart: the first runs after change
	// points.
	Marks  []Mark
	Runs   []RunData
	Bounds []Bound
	// Heat, for a heatmap, are the edges of its latency buckets (ms, one
	// more than its series): series k counts the operations in (Heat[k],
	// Heat[k+1]] each second, drawn as cells, not lines.
	Heat []float64
}

// Mark marks a point of a chart, with a line across the chart at its x and
// a ring around it: the first run after a change point.
type Mark struct {
	Run   int // the index in the chart's Runs of the run the point is of
	X, Y  float64
	Kind  string // regression (red), improvement (green) or change
	Label string // what the mark says, at the top of its line
}

// SeriesCount is the number of lines the chart draws.
func (c Chart) SeriesCount() int {
	n := 0
	for _, r := range c.Runs {
		n += len(r.Series)
	}
	return n
}

// metricLine is a sampled metric drawn as a line.
type metricLine struct {
	label, metric string
	rate          bool    // per-second rate of a counter
	scale         float64 // multiply by
	// or are the metric's names in other server versions, tried in
	// order when metric was not recorded.
	or []string
}

// names are the metric's names, its own first.
func (l metricLine) names() []string { return append([]string{l.metric}, l.or...) }

// metricChart is a chart of sampled metrics of one kind of source.
type metricChart struct {
	id, title, unit, note string
	host                  bool // host metrics, else each server's
	lines                 []metricLine
}

const mb = 1.0 / (1 << 20)

var metricCharts = []metricChart{
	{id: "cache", title: "WiredTiger cache", unit: "MB", lines: []metricLine{
		{"cache used", engine.CacheMetric("bytes currently in the cache"), false, mb, nil},
		{"dirty", engine.CacheMetric("tracked dirty bytes in the cache"), false, mb, nil},
		{"configured maximum", engine.CacheMetric("maximum bytes configured"), false, mb, nil}}},
	{id: "pages", title: "Pages read into and written from the cache", unit: "pages/s", lines: []metricLine{
		{"read into cache", engine.CacheMetric("pages read into cache"), true, 1, nil},
		{"written from cache", engine.CacheMetric("pages written from cache"), true, 1, nil}}},
	// 8.0 moved the application threads' eviction time into cache.
	{id: "evict", title: "Application-thread eviction", unit: "ms of eviction per s", note: "time application threads spent evicting pages instead of serving requests", lines: []metricLine{
		{"app-thread eviction", record.AppThreadEvictMetric, true, 1e-3, []string{engine.CacheMetric("application thread time evicting (usecs)")}}}},
	// The tickets are wiredTiger.concurrentTransactions up to 7.0 and
	// queues.execution from 8.0 (the real 7.0 files have only the first).
	{id: "tickets", title: "Tickets out and operations queued", unit: "count", lines: []metricLine{
		{"read tickets out", "wiredTiger.concurrentTransactions.read.out", false, 1, []string{"queues.execution.read.out"}},
		{"write tickets out", "wiredTiger.concurrentTransactions.write.out", false, 1, []string{"queues.execution.write.out"}},
		{"readers queued", "globalLock.currentQueue.readers", false, 1, nil},
		{"writers queued", "globalLock.currentQueue.writers", false, 1, nil}}},
	{id: "cpu", title: "Host CPU", unit: "%", host: true, lines: []metricLine{
		{"user", "cpu.user", false, 1, nil}, {"system", "cpu.system", false, 1, nil}, {"iowait", "cpu.iowait", false, 1, nil}}},
}

// Model is everything a report shows.
type Model struct {
	Records []*record.Record
	Charts  []Chart
}

// Load reads the runs from st and builds their charts.
func Load(ctx context.Context, st *store.Store, ids ...int64) (*Model, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("report: no run")
	}
	m := &Model{}
	var cols []runColumns // per record
	for _, id := range ids {
		rec, err := record.Load(ctx, st, id)
		if err != nil {
			return nil, err
		}
		rc, err := loadColumns(ctx, st, rec)
		if err != nil {
			return nil, err
		}
		m.Records, cols = append(m.Records, rec), append(cols, rc)
	}
	charts := []Chart{
		{ID: "ops", Title: "Operations per second, per step", Unit: "ops/s", Note: "each workload's own count of the operations that finished in each second (the last, partial second left out)"},
		{ID: "p99", Title: "p99 latency per second, per step", Unit: "ms", Note: "each workload's 99th percentile of the operations that finished in each second"},
	}
	for _, rec := range m.Records {
		ops, p99 := stepSeries(rec)
		charts[0].Runs = append(charts[0].Runs, ops)
		charts[1].Runs = append(charts[1].Runs, p99)
	}
	heat, err := heatCharts(m.Records)
	if err != nil {
		return nil, err
	}
	charts = append(charts, heat...)
	for _, mc := range metricCharts {
		c := Chart{ID: mc.id, Title: mc.title, Unit: mc.unit, Note: mc.note}
		for i, rec := range m.Records {
			if rd := metricSeries(rec, cols[i], mc); len(rd.Series) > 0 {
				c.Runs = append(c.Runs, rd)
			}
		}
		charts = append(charts, c)
	}
	charts = append(charts, diskChart(m.Records, cols), replChart(m.Records, cols))
	charts = append(charts, kneeCharts(m.Records)...)
	charts = append(charts, tuneCharts(m.Records)...)
	for _, c := range charts {
		if c.SeriesCount() == 0 {
			continue
		}
		for _, rec := range m.Records {
			if c.XLabel != "" {
				break // not on the time axis: no steps to mark
			}
			if len(c.Heat) > 0 && rec.Run.ID != c.Runs[0].Run {
				continue // a heatmap is of one run
			}
			c.Bounds = append(c.Bounds, bounds(rec)...)
		}
		if len(m.Records) > 1 && len(c.Heat) == 0 {
			for i := range c.Runs {
				for j := range c.Runs[i].Series {
					c.Runs[i].Series[j].Label = fmt.Sprintf("run %d: %s", c.Runs[i].Run, c.Runs[i].Series[j].Label)
				}
			}
		}
		m.Charts = append(m.Charts, c)
	}
	return m, nil
}

func bounds(rec *record.Record) []Bound {
	var out []Bound
	for _, s := range rec.Steps {
		end := s.End
		if end.IsZero() {
			end = s.Start
		}
		out = append(out, Bound{Run: rec.Run.ID, Seq: s.Seq, Start: rel(rec, s.Start), End: end.Sub(rec.Run.StartedAt).Seconds(), Label: s.Title()})
	}
	return out
}

func rel(rec *record.Record, t interface{ UnixNano() int64 }) float64 {
	return float64(t.UnixNano()-rec.Run.StartedAt.UnixNano()) / 1e9
}

// stepSeries places each workload step's per-second operations and p99 on
// the run's time axis (the middle of each second), with a gap between
// steps.
func stepSeries(rec *record.Record) (ops, p99 RunData) {
	ops = RunData{Run: rec.Run.ID, Series: []Series{{Label: "ops/s"}}}
	p99 = RunData{Run: rec.Run.ID, Series: []Series{{Label: "p99"}}}
	for _, s := range rec.Steps {
		o, q := record.SecondSeries(s)
		if len(o) > 1 {
			o, q = o[:len(o)-1], q[:len(q)-1]
		}
		if len(o) == 0 {
			continue
		}
		start := rel(rec, s.Start)
		add := func(x, n, q float64) {
			// x values must increase: a step that starts within its
			// predecessor's last second moves on by a millisecond.
			if k := len(ops.X); k > 0 && x <= ops.X[k-1] {
				x = ops.X[k-1] + 0.001
			}
			ops.X, p99.X = append(ops.X, x), append(p99.X, x)
			ops.Series[0].Y = append(ops.Series[0].Y, n)
			p99.Series[0].Y = append(p99.Series[0].Y, q)
		}
		for i := range o {
			add(start+float64(i)+0.5, o[i], q[i]/1000)
		}
		add(start+float64(len(o)), math.NaN(), math.NaN()) // a gap before the next step
	}
	if len(ops.X) == 0 {
		ops.Series, p99.Series = nil, nil
	}
	return ops, p99
}

// runColumns are the metrics the charts may draw of one run, by source,
// each source read once (a page of charts would otherwise read a source's
// samples once per chart).
type runColumns map[string]store.Columns

// loadColumns reads, for each host and server source of rec, every metric
// of the charts of that kind (each name a version may give it) and, for the
// host, its disks; for a server, its replica set's members as
// replSetGetStatus saw them.
func loadColumns(ctx context.Context, st *store.Store, rec *record.Record) (runColumns, error) {
	out := runColumns{}
	for _, src := range rec.Sources {
		host := src == "host"
		if !host && !strings.HasPrefix(src, "server:") {
			continue
		}
		var names []string
		for _, mc := range metricCharts {
			if mc.host != host {
				continue
			}
			for _, l := range mc.lines {
				names = append(names, l.names()...)
			}
		}
		if !host {
			names = append(names, memberMetrics()...)
		}
		if host {
			all, err := st.MetricNames(ctx, rec.Run.ID, src)
			if err != nil {
				return nil, err
			}
			for _, n := range all {
				if strings.HasPrefix(n, "disk.") {
					names = append(names, n)
				}
			}
		}
		slices.Sort(names)
		cols, err := st.SeriesSet(ctx, rec.Run.ID, src, slices.Compact(names))
		if err != nil {
			return nil, err
		}
		out[src] = cols
	}
	return out, nil
}

// column returns a copy of metric name's values in cols (nil when cols has
// no such metric): charts scale it in place.
func column(cols store.Columns, name string) []float64 {
	if i := slices.Index(cols.Names, name); i >= 0 {
		return slices.Clone(cols.Values[i])
	}
	return nil
}

// metricSeries draws a metric chart's lines for one run: from the host, or
// from the first server that has them (a run's chart shares one x axis, and
// servers are sampled at different times), labelled with the server's name
// when the run has several.
func metricSeries(rec *record.Record, rc runColumns, mc metricChart) RunData {
	rd := RunData{Run: rec.Run.ID}
	var sources []string
	for _, s := range rec.Sources {
		if mc.host && s == "host" || !mc.host && strings.HasPrefix(s, "server:") {
			sources = append(sources, s)
		}
	}
	for _, src := range sources {
		cols := rc[src]
		for _, l := range mc.lines {
			var y []float64
			for _, name := range l.names() {
				if y = column(cols, name); !allNaN(y) {
					break
				}
			}
			if allNaN(y) {
				continue
			}
			if l.rate {
				y = record.Rates(cols.TS, y)
			}
			for j := range y {
				y[j] *= l.scale
			}
			label := l.label
			if len(sources) > 1 {
				label = strings.TrimPrefix(src, "server:") + " " + label
			}
			rd.Series = append(rd.Series, Series{Label: label, Y: y})
		}
		if len(rd.Series) > 0 && rd.X == nil {
			for _, ts := range cols.TS {
				rd.X = append(rd.X, rel(rec, ts))
			}
		}
		if len(sources) > 1 && len(rd.Series) > 0 {
			// Different servers have different sample times: one source
			// per run keeps the x values shared.
			break
		}
	}
	return breakGaps(rd)
}

// breakGaps puts a gap (a point of NaNs) where samples are missing, e.g.
// while a server restarted between two steps: more than three sampling
// intervals (the median one) and a second apart. A line is then not drawn
// across the time nothing was measured.
func breakGaps(rd RunData) RunData {
	if len(rd.X) < 3 {
		return rd
	}
	dx := make([]float64, 0, len(rd.X)-1)
	for i := 1; i < len(rd.X); i++ {
		dx = append(dx, rd.X[i]-rd.X[i-1])
	}
	sorted := append([]float64(nil), dx...)
	sort.Float64s(sorted)
	interval := sorted[len(sorted)/2]
	limit := math.Max(3*interval, interval+1)
	gaps := 0
	for _, d := range dx {
		if d > limit {
			gaps++
		}
	}
	if gaps == 0 {
		return rd
	}
	x := make([]float64, 0, len(rd.X)+gaps)
	ys := make([][]float64, len(rd.Series))
	for i := range rd.X {
		if i > 0 && dx[i-1] > limit {
			x = append(x, rd.X[i-1]+interval)
			for k := range ys {
				ys[k] = append(ys[k], math.NaN())
			}
		}
		x = append(x, rd.X[i])
		for k, s := range rd.Series {
			ys[k] = append(ys[k], s.Y[i])
		}
	}
	rd.X = x
	for k := range rd.Series {
		rd.Series[k].Y = ys[k]
	}
	return rd
}

// diskChart draws each disk's read and write throughput.
func diskChart(recs []*record.Record, cols []runColumns) Chart {
	c := Chart{ID: "disk", Title: "Host disks", Unit: "MB/s"}
	for i, rec := range recs {
		host, ok := cols[i]["host"]
		if !ok {
			continue
		}
		var lines []metricLine
		for _, n := range host.Names {
			dev, field, ok := strings.Cut(strings.TrimPrefix(n, "disk."), ".")
			if !strings.HasPrefix(n, "disk.") || !ok {
				continue
			}
			switch field {
			case "read_bytes":
				lines = append(lines, metricLine{dev + " read", n, false, mb, nil})
			case "write_bytes":
				lines = append(lines, metricLine{dev + " write", n, false, mb, nil})
			}
		}
		sort.Slice(lines, func(i, j int) bool { return lines[i].label < lines[j].label })
		if rd := metricSeries(rec, cols[i], metricChart{host: true, lines: lines}); len(rd.Series) > 0 {
			c.Runs = append(c.Runs, rd)
		}
	}
	return c
}

func allNaN(y []float64) bool {
	for _, v := range y {
		if !math.IsNaN(v) {
			return false
		}
	}
	return true
}

package ftdcimport

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/ftdc"
)

// nameMap gives each metric of a schema its stored name, "" for those
// not stored.
type nameMap struct {
	names []string
	// stored are the names stored, in the chunk's order, and src the
	// index of each in the chunk: a store.Block's Names, kept for every
	// chunk of the schema.
	stored []string
	src    []int
	// delta[k] is the index in the chunk of engine.DeltaMetrics()[k], -1
	// when the chunk lacks it.
	delta []int
	// host are the chunk's systemMetrics that go to the host source.
	host *hostMap
}

// index fills the parts of nm that follow from names.
func (nm *nameMap) index(dm []string) *nameMap {
	for i, n := range nm.names {
		if n != "" {
			nm.stored, nm.src = append(nm.stored, n), append(nm.src, i)
		}
	}
	nm.delta = make([]int, len(dm))
	for k, d := range dm {
		nm.delta[k] = -1
		for i, n := range nm.names {
			if n == d {
				nm.delta[k] = i
			}
		}
	}
	return nm
}

// ServerStatusPrefix is the FTDC section whose metrics are stored under the
// names wtd's sampler gives serverStatus fields (engine.FlattenNumbers).
const ServerStatusPrefix = "serverStatus."

// newNameMap names the metrics of chunk c: a serverStatus field by its path
// in serverStatus, as the sampler names it (fields the sampler does not
// store, such as array elements and timestamps' increments, are left out);
// any other section's metrics by their full FTDC name
// ("replSetGetStatus.members.0.health", "systemMetrics.vmstat.pgfault").
// Each section's start and end (the collector's own times) are left out,
// and so are the systemMetrics stored as host metrics (newHostMap).
func newNameMap(c *ftdc.Chunk) *nameMap {
	flat := engine.FlattenNumbers(serverStatus(c.Ref))
	nm := &nameMap{names: make([]string, len(c.Names)), host: newHostMap(c)}
	for i, n := range c.Names {
		if nm.host.mapped[i] {
			continue
		}
		if k, ok := strings.CutPrefix(n, ServerStatusPrefix); ok {
			if _, sampled := flat[k]; sampled && k != "start" && k != "end" {
				nm.names[i] = k
			}
			continue
		}
		if n == "start" || n == "end" {
			continue
		}
		if _, rest, ok := strings.Cut(n, "."); ok && (rest == "start" || rest == "end") {
			continue
		}
		nm.names[i] = n
	}
	return nm
}

func (im *importer) nameMap(c *ftdc.Chunk) *nameMap {
	if len(c.Names) == 0 {
		return (&nameMap{host: newHostMap(c)}).index(im.dm)
	}
	key := &c.Names[0]
	if nm, ok := im.names[key]; ok {
		return nm
	}
	nm := newNameMap(c).index(im.dm)
	im.names[key] = nm
	return nm
}

func (im *importer) chunk(c *ftdc.Chunk, fs *fileState) error {
	if c.Samples == 0 {
		return nil
	}
	if im.first == 0 {
		im.first = c.Times[0]
	}
	ss := serverStatus(c.Ref)
	host := str(ss, "host")
	pid, hasPID := first(c, "serverStatus.pid")
	var start int64
	if lt, ok := first(c, "serverStatus.localTime"); ok {
		if up, ok := first(c, "serverStatus.uptimeMillis"); ok {
			start = lt - up
		}
	}
	p := im.find(host, pid, start)
	if !hasPID && im.cur != nil {
		// A sample without serverStatus's pid (its collector failed) is
		// the process's whose samples come before.
		p = im.cur
	}
	if p == nil {
		var err error
		if p, err = im.newProcess(c, ss, fs, host, pid, start); err != nil {
			return err
		}
	}
	im.cur = p
	p.files[fs.path] = true
	fs.runs[p.res.Run] = true
	if im.vals == nil {
		im.vals = make(map[string]float64, len(im.dm))
		im.dm = stepMetrics()
	}
	nm := im.nameMap(c)
	source := "server:" + im.opt.Name
	im.keep, im.ts = im.keep[:0], im.ts[:0]
	for s := 0; s < c.Samples; s++ {
		ts := c.Times[s]
		if ts <= p.lastTS {
			im.rep.Dropped++
			continue
		}
		im.keep, im.ts = append(im.keep, s), append(im.ts, time.UnixMilli(ts))
		// The steps' deltas and peaks need a few metrics only.
		clear(im.vals)
		for k, i := range nm.delta {
			if i >= 0 {
				im.vals[im.dm[k]] = float64(c.Values[i*c.Samples+s])
			}
		}
		for _, st := range p.stretches {
			st.t.observe(ts, im.vals, im.dm)
		}
		for _, w := range p.windows {
			w.observe(ts, im.vals, im.dm)
		}
		if p.firstTS == 0 {
			p.firstTS = ts
		}
		p.lastTS = ts
		p.res.Samples++
	}
	if len(im.keep) == 0 {
		return nil
	}
	n := len(im.keep)
	im.buf = slices.Grow(im.buf[:0], len(nm.stored)*n)[:len(nm.stored)*n]
	for m, i := range nm.src {
		col, out := c.Values[i*c.Samples:(i+1)*c.Samples], im.buf[m*n:(m+1)*n]
		for k, s := range im.keep {
			out[k] = float64(col[s])
		}
	}
	im.st.AddBlock(p.res.Run, source, store.Block{Names: nm.stored, TS: im.ts, Values: im.buf})
	im.addHost(p.res.Run, nm.host, c, &p.hostPrev)
	// One chunk at a time: the store's queue holds no more than a chunk.
	return im.st.Flush(im.ctx)
}

// find returns the process of host and pid that started at start (within
// a few seconds: localTime and uptime are not read at the same instant).
func (im *importer) find(host string, pid, start int64) *process {
	for _, p := range im.procs {
		if p.host == host && p.pid == pid && abs(p.start-start) < 5000 {
			return p
		}
	}
	return nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

const metaSlack = 5 * time.Second

// applies reports whether metadata m describes the process that started at
// start (ms) and wrote chunk c: mongod writes it when the process starts
// or opens a new file, before the samples it precedes. A previous process's
// interim chunk, written after the new process's metadata, is older.
func applies(m *ftdc.Metadata, c *ftdc.Chunk, start int64) bool {
	if m == nil {
		return false
	}
	last := time.UnixMilli(c.Times[c.Samples-1])
	if m.ID.After(last.Add(metaSlack)) {
		return false
	}
	return start == 0 || !m.ID.Before(time.UnixMilli(start).Add(-metaSlack))
}

func (im *importer) newProcess(c *ftdc.Chunk, ss bson.Raw, fs *fileState, host string, pid, start int64) (*process, error) {
	p := &process{host: host, pid: pid, start: start, files: map[string]bool{}}
	version := str(ss, "version")
	var gitVersion, replSet string
	var facts store.HostFacts
	if applies(im.meta, c, start) {
		p.meta = im.meta
		if bi := p.meta.Section("buildInfo"); bi != nil {
			if v := str(bi, "version"); v != "" {
				version = v
			}
			gitVersion = str(bi, "gitVersion")
		}
		if hi := p.meta.Section("hostInfo"); hi != nil {
			facts = hostFacts(hi)
			if mb := num(hi, "system", "memSizeMB"); mb != nil && *mb > 0 {
				b := uint64(*mb) << 20
				p.memBytes = &b
			}
		}
		if opts := p.meta.Section("getCmdLineOpts"); opts != nil {
			s := engine.CmdLineSettings(opts)
			p.settings = &s
			replSet = str(opts, "parsed", "replication", "replSet")
			if replSet == "" {
				replSet = str(opts, "parsed", "replication", "replSetName")
			}
		}
	}
	if replSet == "" {
		replSet = str(ss, "repl", "setName")
	}
	if cm := c.Lookup(ServerStatusPrefix + engine.CacheMetric("maximum bytes configured")); len(cm) > 0 {
		v := cm[0]
		p.cacheMax = &v
	}
	if p.settings == nil {
		p.settings = &record.Settings{}
	}
	if p.cacheMax != nil {
		p.settings.CacheMaxBytes = *p.cacheMax
	}
	if p.params != nil {
		p.settings.Parameters = p.params
	}
	p.stretches = []*stretch{{t: everything(), settings: p.settings}}
	for _, d := range im.deltas {
		if start == 0 || !d.ID.Before(time.UnixMilli(start).Add(-metaSlack)) {
			im.applyDelta(p, d)
		}
	}
	params := map[string]any{"host": host}
	if replSet != "" {
		params["replSet"] = replSet
	}
	if proc := processName(str(ss, "process")); proc != "" {
		params["process"] = proc
	}
	firstTS := time.UnixMilli(c.Times[0])
	run, err := im.st.CreateRun(im.ctx, store.RunInfo{
		PlaybookPath: "import:" + host, Params: params, StartedAt: firstTS, Host: facts,
		TargetURI: "mongodb://" + host, TargetVersion: version, WtdVersion: im.opt.WtdVersion, Trigger: Trigger})
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", fs.path, err)
	}
	abspath, _ := filepath.Abs(fs.path)
	if im.opt.Shown != nil {
		abspath = im.shown(fs.path)
	}
	if err := im.st.AddServer(im.ctx, run, store.ServerRecord{Name: im.opt.Name, URI: "mongodb://" + host,
		Version: version, GitVersion: gitVersion, PID: int(pid), AddedAt: firstTS}); err != nil {
		return nil, fmt.Errorf("import %s: %w", fs.path, err)
	}
	attrs := map[string]any{"file": abspath, "sha256": fs.sha, "pid": pid}
	if p.meta == nil {
		attrs["metadata"] = "none: the file holds no metadata document for this process"
	}
	im.st.AddEvent(run, firstTS, "info", "import", fmt.Sprintf("imported from %s (pid %d)", abspath, pid), attrs)
	p.res = &Result{Path: im.shown(fs.path), Run: run, Server: host, Version: version, Skipped: im.pend}
	im.pend = nil
	for _, w := range im.opt.Windows {
		from, to := w.From, w.To
		if w.Offsets {
			from, to = time.UnixMilli(im.first).Add(w.FromOff), time.UnixMilli(im.first).Add(w.ToOff)
		}
		p.windows = append(p.windows, &tracker{from: from.UnixMilli(), to: to.UnixMilli()})
	}
	im.procs = append(im.procs, p)
	return p, nil
}

func num(doc bson.Raw, keys ...string) *int64 {
	v, err := doc.LookupErr(keys...)
	if err != nil {
		return nil
	}
	if n, ok := v.AsInt64OK(); ok {
		return &n
	}
	return nil
}

// hostFacts maps hostInfo onto the host facts wtd records for its runs.
func hostFacts(hi bson.Raw) store.HostFacts {
	var f store.HostFacts
	if n := num(hi, "system", "numCores"); n != nil {
		f.Cores = int(*n)
	}
	if mb := num(hi, "system", "memSizeMB"); mb != nil {
		f.MemoryBytes = *mb << 20
	}
	f.Kernel = str(hi, "extra", "kernelVersion")
	if f.Kernel == "" {
		f.Kernel = strings.TrimSpace(str(hi, "os", "name") + " " + str(hi, "os", "version"))
	}
	return f
}

func everything() *tracker { return &tracker{from: -1 << 62, to: 1 << 62} }

// parameters returns the getParameter section of a type-2 document as
// text by name, nil when it has none.
func parameters(m *ftdc.Metadata) map[string]any {
	gp := m.Section("getParameter")
	if gp == nil {
		return nil
	}
	var doc map[string]any
	if err := bson.Unmarshal(gp, &doc); err != nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range doc {
		if k != "ok" && k != "start" && k != "end" {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// ownDelta reports whether type-2 document m, read while p is the current
// process, is p's: not before it started, nor after a newer process's
// metadata.
func (im *importer) ownDelta(p *process, m *ftdc.Metadata) bool {
	at := m.ID.UnixMilli()
	return at >= p.start && (im.meta == nil || im.meta.ID.UnixMilli() <= max(p.lastTS, at)+metaSlack.Milliseconds())
}

// applyDelta records the parameters of type-2 document m for process p:
// the first gives them all; one that changes a parameter starts a new
// stretch of p at its time.
func (im *importer) applyDelta(p *process, m *ftdc.Metadata) {
	at := m.ID.UnixMilli()
	changed := parameters(m)
	if changed == nil {
		return
	}
	var what []string
	params := maps.Clone(p.params)
	if params == nil {
		params = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(changed)) {
		if old, ok := params[k]; ok && old == changed[k] {
			continue
		}
		if p.params != nil {
			what = append(what, fmt.Sprintf("%s=%v", k, changed[k]))
		}
		params[k] = changed[k]
	}
	p.params = params
	last := p.stretches[len(p.stretches)-1]
	if len(what) == 0 {
		last.settings.Parameters = params
		return
	}
	// mongod writes the change when it sees it, and the samples before it
	// when their chunk is full: the stretches are cut by time.
	last.t.to = at - 1
	s := *last.settings
	s.Parameters = params
	p.stretches = append(p.stretches, &stretch{t: &tracker{from: at, to: 1 << 62}, settings: &s, changed: strings.Join(what, ",")})
}

// processName is serverStatus's process ("mongod", "mongos", or the
// binary's path on Windows) without its directory and .exe.
func processName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	return strings.TrimSuffix(p, ".exe")
}

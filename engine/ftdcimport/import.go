// Package ftdcimport records the FTDC files of a mongod or mongos (its
// diagnostic.data) as runs: one run per server process, its serverStatus
// samples under the names wtd's own sampler gives them, the host's
// systemMetrics as wtd's host metrics (host.go), the server and its
// command line as the metadata says, and steps for the stretches between
// restarts and for the windows the caller names.
package ftdcimport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/ftdc"
)

// Trigger is what imported runs are triggered by.
const Trigger = "import"

// ImportedReason is the provenance reason of every imported step.
const ImportedReason = record.ImportedReason

// Window is a stretch of time the caller wants as a step: From and To are
// times, or, with Offsets, durations after the first sample imported.
type Window struct {
	Name     string
	From, To time.Time
	Offsets  bool
	FromOff  time.Duration
	ToOff    time.Duration
}

// Options tune an import.
type Options struct {
	Name       string // the server's name in the runs ("m1" by default): samples go to source server:NAME
	Windows    []Window
	WtdVersion string
	// Shown names a file in what the import records and returns (its
	// event, the files imported, Result.Path): an upload's own name
	// rather than where it was saved. Nil: the path given.
	Shown func(path string) string
}

// shown is how path is named in the records.
func (im *importer) shown(path string) string {
	if im.opt.Shown != nil {
		return im.opt.Shown(path)
	}
	return path
}

// Result is one run an import made.
type Result struct {
	Path    string    `json:"path"`
	Run     int64     `json:"run"`
	Server  string    `json:"server"`
	Version string    `json:"version"`
	Samples int64     `json:"samples"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Skipped []string  `json:"skipped"`
}

// Known is a file already imported: nothing new was made of it.
type Known struct {
	Path string
	Prev store.ImportedFile
}

// Report is what an import did.
type Report struct {
	Runs  []Result
	Known []Known
	// Dropped counts samples not written because a run had them already
	// (a previous process's interim chunk written again after a restart).
	Dropped int64
	// Unmatched are the windows no imported sample fell in.
	Unmatched []string
	// Skipped is what was skipped with no run to put it in: empty
	// files, and what the reader skipped before any run began when
	// none did (a directory's entries that are not metrics files).
	Skipped []string
}

// NotFTDCError is a file that holds no FTDC document.
type NotFTDCError struct {
	Path   string
	Reason string
}

func (e *NotFTDCError) Error() string {
	return fmt.Sprintf("%s is not an FTDC file (a metrics.* file of diagnostic.data): %s", e.Path, e.Reason)
}

// Check returns a *NotFTDCError when path is a file whose first document is
// not FTDC's; a directory is checked file by file while it is read.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return nil
	}
	if fi.Size() == 0 {
		return nil // nothing to read: Import says it skipped it
	}
	r, err := ftdc.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	it, err := r.Next()
	if err != nil {
		return &NotFTDCError{Path: path, Reason: err.Error()}
	}
	if s, ok := it.(ftdc.Skip); ok && s.Offset == 0 {
		return &NotFTDCError{Path: path, Reason: s.Reason}
	}
	return nil
}

// Import reads paths (files or diagnostic.data directories) in order into
// st. Files already imported (by content) make nothing new and are listed
// in Report.Known.
func Import(ctx context.Context, st *store.Store, paths []string, opt Options) (*Report, error) {
	if opt.Name == "" {
		opt.Name = "m1"
	}
	for _, p := range paths {
		if err := Check(p); err != nil {
			return nil, err
		}
	}
	im := &importer{ctx: ctx, st: st, opt: opt, rep: &Report{}, names: map[*string]*nameMap{}}
	for _, p := range paths {
		if err := im.readPath(p); err != nil {
			im.abort(err)
			return im.rep, err
		}
	}
	if err := im.finish(); err != nil {
		im.abort(err)
		return im.rep, err
	}
	return im.rep, nil
}

// process is one server process seen in the files: one run.
type process struct {
	res      *Result
	host     string
	pid      int64
	start    int64 // ms: localTime - uptimeMillis of its first sample
	firstTS  int64
	lastTS   int64
	meta     *ftdc.Metadata
	settings *record.Settings
	params   map[string]any // getParameter of type-2 documents (8.0 on)
	cacheMax *int64
	memBytes *uint64
	// stretches are the process's stretches between changes of its
	// parameters (type-2 documents, 8.0 on); samples go to the last.
	stretches []*stretch
	windows   []*tracker
	files     map[string]bool
	hostPrev  hostPrev // the last systemMetrics sample, for the host rates
}

// stretch is a part of a process with one configuration.
type stretch struct {
	t        *tracker
	settings *record.Settings
	changed  string // what changed at its start; "" for the first
}

// tracker follows the metrics a step's deltas need over a window.
type tracker struct {
	from, to      int64 // ms, inclusive
	before, after map[string]float64
	peaks         map[string]float64
	firstTS       int64
	lastTS        int64
	secs          secondsTracker
}

func (t *tracker) observe(ts int64, m map[string]float64, metrics []string) {
	if ts < t.from || ts > t.to {
		return
	}
	if t.before == nil {
		t.before, t.after, t.peaks, t.firstTS = map[string]float64{}, map[string]float64{}, map[string]float64{}, ts
		for _, k := range metrics {
			if v, ok := m[k]; ok {
				t.before[k] = v
			}
		}
	}
	t.lastTS = ts
	t.secs.observe(ts, m)
	for _, k := range metrics {
		if v, ok := m[k]; ok {
			t.after[k] = v
			if old, seen := t.peaks[k]; !seen || v > old {
				t.peaks[k] = v
			}
		}
	}
}

type importer struct {
	ctx   context.Context
	st    *store.Store
	opt   Options
	rep   *Report
	procs []*process
	cur   *process
	meta  *ftdc.Metadata // the last type-0 document read
	// deltas are the type-2 documents read since the last type-0 one:
	// mongod writes them as it sees a change, and the samples before
	// when their chunk is full, so a process may come after its own.
	deltas []*ftdc.Metadata
	names  map[*string]*nameMap
	files  []*fileState
	first  int64 // ms: the first sample of the import, for offset windows
	pend   []string
	vals   map[string]float64 // a sample's DeltaMetrics, for the steps
	dm     []string
	keep   []int       // the samples of a chunk kept (after the process's last)
	ts     []time.Time // their times
	buf    []float64   // their values, metric by metric
	// hostBuf holds a chunk's host metrics, hostBlk those of one block.
	hostBuf, hostBlk []float64
}

type fileState struct {
	path  string
	sha   string
	bytes int64
	known bool
	runs  map[int64]bool
}

func (im *importer) file(path string) (*fileState, error) {
	if n := len(im.files); n > 0 && im.files[n-1].path == path {
		return im.files[n-1], nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	fs := &fileState{path: path, sha: hex.EncodeToString(h.Sum(nil)), bytes: n, runs: map[int64]bool{}}
	for _, o := range im.files {
		if o.sha == fs.sha {
			// The same content twice in one import (a file given again,
			// or a copy of it).
			fs.known = true
			im.rep.Known = append(im.rep.Known, Known{Path: im.shown(path), Prev: store.ImportedFile{SHA256: o.sha, Path: im.shown(o.path), Bytes: o.bytes,
				Runs: slices.Sorted(maps.Keys(o.runs))}})
			im.files = append(im.files, fs)
			return fs, nil
		}
	}
	prev, ok, err := im.st.LookupImportedFile(im.ctx, fs.sha)
	if err != nil {
		return nil, err
	}
	if ok && im.anyRunLeft(prev.Runs) {
		fs.known = true
		im.rep.Known = append(im.rep.Known, Known{Path: im.shown(path), Prev: prev})
	}
	im.files = append(im.files, fs)
	return fs, nil
}

// anyRunLeft reports whether a run an earlier import made is still there
// (a file whose runs were all removed may be imported again).
func (im *importer) anyRunLeft(runs []int64) bool {
	for _, id := range runs {
		if _, err := im.st.GetRun(im.ctx, id); err == nil {
			return true
		}
	}
	return false
}

func (im *importer) readPath(path string) error {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && fi.Size() == 0 {
		im.rep.Skipped = append(im.rep.Skipped, path+": an empty file, nothing to read")
		return nil
	}
	r, err := ftdc.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch v := it.(type) {
		case ftdc.Skip:
			if fi, err := os.Stat(v.File); err == nil && !fi.IsDir() && v.Length > 0 {
				if fs, err := im.file(v.File); err == nil && fs.known {
					continue
				}
			}
			im.skip(v.String())
		case *ftdc.Metadata:
			fs, err := im.file(v.File)
			if err != nil {
				return err
			}
			if fs.known {
				continue
			}
			if v.Type == ftdc.TypeMetadata {
				im.meta, im.deltas = v, nil
			} else {
				im.deltas = append(im.deltas, v)
				if p := im.cur; p != nil && im.ownDelta(p, v) {
					im.applyDelta(p, v)
				}
			}
		case *ftdc.Chunk:
			fs, err := im.file(v.File)
			if err != nil {
				return err
			}
			if fs.known {
				continue
			}
			if err := im.chunk(v, fs); err != nil {
				return err
			}
		}
	}
}

func (im *importer) skip(s string) {
	if im.cur != nil {
		im.cur.res.Skipped = append(im.cur.res.Skipped, s)
		return
	}
	im.pend = append(im.pend, s)
}

// serverStatus returns the chunk's serverStatus section: at the top, or
// the first one in a role section of the 8.0 sharded layout (the one
// ftdc names "serverStatus").
func serverStatus(ref bson.Raw) bson.Raw {
	elems, _ := ref.Elements()
	for _, e := range elems {
		d, ok := e.Value().DocumentOK()
		if !ok {
			continue
		}
		switch e.Key() {
		case "serverStatus":
			return d
		case "shard", "router", "common":
			if v, err := d.LookupErr("serverStatus"); err == nil {
				if ss, ok := v.DocumentOK(); ok {
					return ss
				}
			}
		}
	}
	return nil
}

func str(doc bson.Raw, keys ...string) string {
	if doc == nil {
		return ""
	}
	v, err := doc.LookupErr(keys...)
	if err != nil {
		return ""
	}
	s, _ := v.StringValueOK()
	return s
}

func first(c *ftdc.Chunk, name string) (int64, bool) {
	if v := c.Lookup(name); len(v) > 0 {
		return v[0], true
	}
	return 0, false
}

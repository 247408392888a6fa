package ftdc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Document types.
const (
	TypeMetadata      = 0 // buildInfo, getCmdLineOpts, hostInfo, ...
	TypeMetricChunk   = 1 // a compressed chunk of samples
	TypeMetadataDelta = 2 // periodic metadata (8.0+): whole at count 0, then what changed
)

// Item is what Reader.Next returns: a *Metadata, a *Chunk or a Skip.
type Item interface{ item() }

func (*Metadata) item() {}
func (*Chunk) item()    {}
func (Skip) item()      {}

// Skip is something the Reader did not read: a document it could not
// decode, the truncated end of a file, a file it could not open.
type Skip struct {
	File   string
	Offset int64 // where the skipped bytes start in File
	Length int64 // how many bytes were skipped (0 when none were read)
	Reason string
}

func (s Skip) String() string {
	return fmt.Sprintf("%s at %d (%d bytes): %s", s.File, s.Offset, s.Length, s.Reason)
}

// Metadata is a type-0 document, or a type-2 one (Type says which). The
// Reader does not reuse it.
type Metadata struct {
	File   string
	Offset int64
	ID     time.Time
	Type   int
	Count  int64    // type 2: 0 for a whole document, n for the n-th delta after it
	Doc    bson.Raw // the document's "doc"
}

// Section returns the section named name of m.Doc ("buildInfo",
// "getCmdLineOpts", "hostInfo", "getParameter", ...), looked for at the top
// and in the role sections of the 8.0 sharded layout ("common",
// "shard", "router"); nil if there is none.
func (m *Metadata) Section(name string) bson.Raw {
	if v, ok := lookupDoc(m.Doc, name); ok {
		return v
	}
	for _, r := range roles {
		if role, ok := lookupDoc(m.Doc, r); ok {
			if v, ok := lookupDoc(role, name); ok {
				return v
			}
		}
	}
	return nil
}

func lookupDoc(doc []byte, key string) (bson.Raw, bool) {
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			return nil, false
		}
		if string(e.key) == key && e.typ == tDocument {
			return bson.Raw(e.value), true
		}
	}
}

// maxDocBytes bounds one top-level document: BSON's 16 MiB and some room.
const maxDocBytes = 48 << 20

// Reader reads FTDC documents from one file or from every metrics file of
// a diagnostic.data directory, one document at a time: it holds at most one
// document and one decoded chunk, whatever the number of files.
type Reader struct {
	files   []string // still to read
	name    string   // the file being read
	rc      io.Closer
	br      *bufio.Reader
	off     int64
	pending []Skip

	doc   []byte
	dec   decoder
	chunk Chunk
}

// Open opens path: an FTDC file, or a diagnostic.data directory whose
// metrics.<time>-<n> files are read in name order and metrics.interim last.
// Other entries of the directory are reported as Skips.
func Open(path string) (*Reader, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open FTDC: %w", err)
	}
	if !fi.IsDir() {
		return &Reader{files: []string{path}}, nil
	}
	files, skips, err := listDir(path)
	if err != nil {
		return nil, fmt.Errorf("open FTDC: %w", err)
	}
	return &Reader{files: files, pending: skips}, nil
}

// NewReader reads the FTDC documents of r, naming it name in Skips.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
}

// SetMaxChunkValues lowers (or raises) the limit on metrics x samples in one
// chunk; a chunk over it is skipped. The default is 32 Mi values.
func (r *Reader) SetMaxChunkValues(n int) { r.dec.maxValues = n }

// listDir returns the metrics files of dir in the order mongod wrote them
// and Skips for the other entries.
func listDir(dir string) ([]string, []Skip, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var archives []string
	var interim string
	var skips []Skip
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Name() == "metrics.interim" && e.Type().IsRegular():
			interim = p
		case strings.HasPrefix(e.Name(), "metrics.") && e.Name() != "metrics.interim.temp" && e.Type().IsRegular():
			archives = append(archives, p)
		default:
			skips = append(skips, Skip{File: p, Reason: "not an FTDC metrics file (metrics.<time>-<n> or metrics.interim)"})
		}
	}
	sort.Strings(archives)
	if interim != "" {
		archives = append(archives, interim)
	}
	return archives, skips, nil
}

// Close closes the file being read.
func (r *Reader) Close() error {
	r.files = nil
	return r.closeFile()
}

func (r *Reader) closeFile() error {
	var err error
	if r.rc != nil {
		err = r.rc.Close()
	}
	r.rc, r.br = nil, nil
	return err
}

// Next returns the next document (*Metadata or *Chunk) or Skip; io.EOF
// after the last. The *Chunk and its buffers are valid until the next call.
func (r *Reader) Next() (Item, error) {
	for {
		if len(r.pending) > 0 {
			s := r.pending[0]
			r.pending = r.pending[1:]
			return s, nil
		}
		if r.br == nil {
			if len(r.files) == 0 {
				return nil, io.EOF
			}
			r.openNext()
			continue
		}
		it, done := r.readDoc()
		if done {
			_ = r.closeFile()
		}
		if it != nil {
			return it, nil
		}
	}
}

func (r *Reader) openNext() {
	r.name, r.files = r.files[0], r.files[1:]
	r.off = 0
	f, err := os.Open(r.name)
	if err != nil {
		r.pending = append(r.pending, Skip{File: r.name, Reason: err.Error()})
		return
	}
	r.rc = f
	r.br = bufio.NewReaderSize(f, 64<<10)
}

// readDoc reads one document; done is true when the file has nothing more
// to read.
func (r *Reader) readDoc() (it Item, done bool) {
	var head [4]byte
	n, err := io.ReadFull(r.br, head[:])
	if n == 0 && errors.Is(err, io.EOF) {
		return nil, true
	}
	start := r.off
	if err != nil {
		return r.skipRest(start, int64(n), "file ends inside a document's length", err), true
	}
	size := int64(int32(binary.LittleEndian.Uint32(head[:])))
	if size < 5 || size > maxDocBytes {
		return r.skipRest(start, 4, fmt.Sprintf("document length %d is not a BSON document's; the rest of the file is not read", size), nil), true
	}
	r.doc = slices.Grow(r.doc[:0], int(size))[:size]
	copy(r.doc, head[:])
	got, err := io.ReadFull(r.br, r.doc[4:])
	r.off += 4 + int64(got)
	if err != nil {
		reason := fmt.Sprintf("truncated document: its length is %d, the file has %d bytes left", size, 4+got)
		if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			reason = "read: " + err.Error()
		}
		return Skip{File: r.name, Offset: start, Length: 4 + int64(got), Reason: reason}, true
	}
	item, err := r.parse(r.doc, start)
	if err != nil {
		return Skip{File: r.name, Offset: start, Length: size, Reason: err.Error()}, false
	}
	return item, false
}

// skipRest reports the bytes from start to the end of the file as skipped;
// read bytes of them have been read already.
func (r *Reader) skipRest(start, read int64, reason string, err error) Skip {
	rest, cerr := io.Copy(io.Discard, r.br)
	r.off = start + read + rest
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		reason = "read: " + err.Error()
	} else if cerr != nil {
		reason += "; read: " + cerr.Error()
	}
	return Skip{File: r.name, Offset: start, Length: read + rest, Reason: reason}
}

// top holds the fields of a top-level document.
type top struct {
	id       time.Time
	hasID    bool
	typ      int64
	hasType  bool
	data     []byte
	hasData  bool
	doc      []byte
	count    int64
	hasCount bool
}

func readTop(doc []byte) (top, error) {
	var t top
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			break
		}
		switch string(e.key) {
		case "_id":
			if e.typ == tDate {
				t.id, t.hasID = time.UnixMilli(int64(binary.LittleEndian.Uint64(e.value))).UTC(), true
			}
		case "type":
			t.typ, t.hasType = number(e)
		case "count":
			t.count, t.hasCount = number(e)
		case "data":
			if e.typ == tBinary {
				t.data, t.hasData = binaryData(e.value)
			}
		case "doc":
			if e.typ == tDocument {
				t.doc = e.value
			}
		}
	}
	return t, it.err
}

// number returns an integer-valued int32, int64 or double element.
func number(e element) (int64, bool) {
	switch e.typ {
	case tInt32:
		return int64(int32(binary.LittleEndian.Uint32(e.value))), true
	case tInt64:
		return int64(binary.LittleEndian.Uint64(e.value)), true
	case tDouble:
		f := math.Float64frombits(binary.LittleEndian.Uint64(e.value))
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	}
	return 0, false
}

// binaryData returns the bytes of a BinData value (subtype 2 has a second
// length inside).
func binaryData(v []byte) ([]byte, bool) {
	b := v[5:]
	if v[4] == 0x02 {
		if len(b) < 4 || int(int32(binary.LittleEndian.Uint32(b))) != len(b)-4 {
			return nil, false
		}
		b = b[4:]
	}
	return b, true
}

func (r *Reader) parse(doc []byte, off int64) (Item, error) {
	t, err := readTop(doc)
	if err != nil {
		return nil, fmt.Errorf("not a BSON document: %w", err)
	}
	if !t.hasType {
		return nil, errors.New("document without an integer type")
	}
	if !t.hasID {
		return nil, fmt.Errorf("type-%d document without a date _id", t.typ)
	}
	switch t.typ {
	case TypeMetricChunk:
		if !t.hasData {
			return nil, errors.New("type-1 document without BinData data")
		}
		c := &r.chunk
		c.File, c.Offset, c.ID = r.name, off, t.id
		if err := r.dec.decode(c, t.data); err != nil {
			return nil, fmt.Errorf("metric chunk %s: %w", t.id.Format(time.RFC3339Nano), err)
		}
		return c, nil
	case TypeMetadata, TypeMetadataDelta:
		if t.doc == nil {
			return nil, fmt.Errorf("type-%d document without a doc document", t.typ)
		}
		if err := validate(t.doc); err != nil {
			return nil, fmt.Errorf("type-%d document: doc: %w", t.typ, err)
		}
		if t.typ == TypeMetadataDelta && !t.hasCount {
			return nil, errors.New("type-2 document without an integer count")
		}
		return &Metadata{File: r.name, Offset: off, ID: t.id, Type: int(t.typ), Count: t.count, Doc: slices.Clone(bson.Raw(t.doc))}, nil
	}
	return nil, fmt.Errorf("unknown document type %d", t.typ)
}

package ftdc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// DefaultSamplesPerChunk is mongod's diagnosticDataCollectionSamplesPerChunk.
const DefaultSamplesPerChunk = 300

// Writer writes FTDC documents as mongod does: metadata documents as they
// come, samples into chunks. A chunk is written when it holds
// SamplesPerChunk samples or when a sample's schema differs from the
// chunk's first (the reference): other metric names, another order, or a
// metric of another kind (numbers of any type are one kind; booleans,
// dates, timestamps, documents and arrays are each their own). The sample
// with the new schema starts the next chunk. A Writer is not safe for
// concurrent use.
type Writer struct {
	w               io.Writer
	samplesPerChunk int

	ref    []byte    // the chunk's reference sample
	refID  time.Time // and its time
	refSig []byte    // its schema
	prev   []int64   // the values of the last sample
	deltas []uint64  // metric m's j-th delta at m*max+j
	n      int       // deltas per metric so far
	max    int       // deltas the open chunk holds at most
	has    bool      // a chunk is open

	cur    []int64 // the sample being added
	sig    []byte
	raw    bytes.Buffer
	packed bytes.Buffer
	zw     *zlib.Writer
}

// NewWriter returns a Writer to w with DefaultSamplesPerChunk.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, samplesPerChunk: DefaultSamplesPerChunk}
}

// SetSamplesPerChunk sets the most samples a chunk holds (2 or more, as
// mongod allows), for the chunks started after it.
func (w *Writer) SetSamplesPerChunk(n int) error {
	if n < 2 {
		return fmt.Errorf("samples per chunk %d: must be 2 or more", n)
	}
	w.samplesPerChunk = n
	return nil
}

// Pending returns the samples of the open chunk.
func (w *Writer) Pending() int {
	if !w.has {
		return 0
	}
	return w.n + 1
}

// WriteMetadata writes a type-0 document whose doc is doc (bson.Raw, or
// anything bson.Marshal takes, such as bson.D).
func (w *Writer) WriteMetadata(at time.Time, doc any) error {
	raw, err := asRaw(doc)
	if err != nil {
		return fmt.Errorf("write FTDC metadata: %w", err)
	}
	return w.writeDoc(bson.D{{Key: "_id", Value: bson.NewDateTimeFromTime(at)}, {Key: "type", Value: int32(TypeMetadata)}, {Key: "doc", Value: raw}})
}

// WriteMetadataDelta writes a type-2 document: count 0 with a whole
// document, then 1, 2, ... with the fields that changed.
func (w *Writer) WriteMetadataDelta(at time.Time, count int64, doc any) error {
	raw, err := asRaw(doc)
	if err != nil {
		return fmt.Errorf("write FTDC metadata delta: %w", err)
	}
	return w.writeDoc(bson.D{{Key: "_id", Value: bson.NewDateTimeFromTime(at)}, {Key: "type", Value: int32(TypeMetadataDelta)}, {Key: "count", Value: count}, {Key: "doc", Value: raw}})
}

// Add adds a sample taken at at (bson.Raw, or anything bson.Marshal takes),
// writing the open chunk first if the sample's schema differs from it, and
// after if the chunk is then full.
func (w *Writer) Add(at time.Time, sample any) error {
	raw, err := asDoc(sample)
	if err != nil {
		return fmt.Errorf("add FTDC sample: %w", err)
	}
	w.cur, w.sig = w.cur[:0], w.sig[:0]
	// scan checks the document as it goes: every document and array in it.
	if err := w.scan(raw, 0); err != nil {
		return fmt.Errorf("add FTDC sample: %w", err)
	}
	if w.has && !bytes.Equal(w.sig, w.refSig) {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if !w.has {
		w.start(at, raw)
		return nil
	}
	for m, v := range w.cur {
		w.deltas[m*w.max+w.n] = uint64(v) - uint64(w.prev[m])
	}
	w.n++
	w.prev, w.cur = w.cur, w.prev
	if w.n == w.max {
		return w.Flush()
	}
	return nil
}

func (w *Writer) start(at time.Time, raw []byte) {
	w.ref = append(w.ref[:0], raw...)
	w.refID = at
	w.refSig = append(w.refSig[:0], w.sig...)
	w.prev, w.cur = w.cur, w.prev
	w.max = w.samplesPerChunk - 1
	need := len(w.prev) * w.max
	if cap(w.deltas) < need {
		w.deltas = make([]uint64, need)
	}
	w.deltas = w.deltas[:need]
	w.n = 0
	w.has = true
}

// scan appends doc's metrics to w.cur and its schema to w.sig: per metric
// element its kind, its key and a 0; documents and arrays end with '}'.
func (w *Writer) scan(doc []byte, depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			return it.err
		}
		if !isMetric(e.typ) {
			continue
		}
		kind := e.typ
		switch kind {
		case tInt32, tInt64, tDecimal128:
			kind = tDouble
		}
		w.sig = append(append(append(w.sig, kind), e.key...), 0)
		if e.typ == tDocument || e.typ == tArray {
			if err := w.scan(e.value, depth+1); err != nil {
				return err
			}
			w.sig = append(w.sig, '}')
			continue
		}
		w.cur = appendMetric(w.cur, e)
	}
}

// Flush writes the open chunk, if there is one; the next sample starts a
// new chunk.
func (w *Writer) Flush() error {
	if !w.has {
		return nil
	}
	data, err := w.compress()
	if err != nil {
		return err
	}
	w.has = false
	return w.writeChunk(w.w, data)
}

func (w *Writer) writeChunk(dst io.Writer, data []byte) error {
	doc, err := bson.Marshal(bson.D{{Key: "_id", Value: bson.NewDateTimeFromTime(w.refID)}, {Key: "type", Value: int32(TypeMetricChunk)}, {Key: "data", Value: bson.Binary{Data: data}}})
	if err != nil {
		return fmt.Errorf("write FTDC chunk: %w", err)
	}
	if _, err := dst.Write(doc); err != nil {
		return fmt.Errorf("write FTDC chunk: %w", err)
	}
	return nil
}

// compress returns the open chunk's data: the uncompressed length, then
// zlib of the reference, the counts and the run-length coded deltas.
func (w *Writer) compress() ([]byte, error) {
	w.raw.Reset()
	w.raw.Write(w.ref)
	metrics := len(w.prev)
	var u32 [4]byte
	binary.LittleEndian.PutUint32(u32[:], uint32(metrics))
	w.raw.Write(u32[:])
	binary.LittleEndian.PutUint32(u32[:], uint32(w.n))
	w.raw.Write(u32[:])
	if w.n > 0 {
		w.appendDeltas(metrics)
	}
	w.packed.Reset()
	binary.LittleEndian.PutUint32(u32[:], uint32(w.raw.Len()))
	w.packed.Write(u32[:])
	if w.zw == nil {
		w.zw = zlib.NewWriter(&w.packed)
	} else {
		w.zw.Reset(&w.packed)
	}
	if _, err := w.zw.Write(w.raw.Bytes()); err != nil {
		return nil, fmt.Errorf("compress FTDC chunk: %w", err)
	}
	if err := w.zw.Close(); err != nil {
		return nil, fmt.Errorf("compress FTDC chunk: %w", err)
	}
	return w.packed.Bytes(), nil
}

// appendDeltas writes the deltas metric by metric as varints, a run of k
// zeros as 0 and k-1; a run goes on across metrics.
func (w *Writer) appendDeltas(metrics int) {
	var buf [2 * binary.MaxVarintLen64]byte
	var zeros uint64
	for m := 0; m < metrics; m++ {
		for _, d := range w.deltas[m*w.max : m*w.max+w.n] {
			if d == 0 {
				zeros++
				continue
			}
			k := 0
			if zeros > 0 {
				k = binary.PutUvarint(buf[:], 0)
				k += binary.PutUvarint(buf[k:], zeros-1)
				zeros = 0
			}
			k += binary.PutUvarint(buf[k:], d)
			w.raw.Write(buf[:k])
		}
	}
	if zeros > 0 {
		k := binary.PutUvarint(buf[:], 0)
		k += binary.PutUvarint(buf[k:], zeros-1)
		w.raw.Write(buf[:k])
	}
}

// WriteInterim writes the open chunk to dst as one type-1 document, as
// mongod keeps it in metrics.interim, and leaves it open. It writes nothing
// when no chunk is open.
func (w *Writer) WriteInterim(dst io.Writer) error {
	if !w.has {
		return nil
	}
	data, err := w.compress()
	if err != nil {
		return err
	}
	return w.writeChunk(dst, data)
}

// WriteInterimFile replaces the file path with WriteInterim's document:
// it writes path.temp, then renames it to path.
func (w *Writer) WriteInterimFile(path string) error {
	tmp := path + ".temp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write FTDC interim: %w", err)
	}
	err = w.WriteInterim(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write FTDC interim %s: %w", path, err)
	}
	return nil
}

func (w *Writer) writeDoc(d bson.D) error {
	doc, err := bson.Marshal(d)
	if err != nil {
		return fmt.Errorf("write FTDC document: %w", err)
	}
	if _, err := w.w.Write(doc); err != nil {
		return fmt.Errorf("write FTDC document: %w", err)
	}
	return nil
}

// asRaw returns v as a validated BSON document.
func asRaw(v any) (bson.Raw, error) {
	raw, err := asDoc(v)
	if err != nil {
		return nil, err
	}
	if err := validate(raw); err != nil {
		return nil, fmt.Errorf("not a BSON document: %w", err)
	}
	return raw, nil
}

// asDoc returns v as BSON, not validated.
func asDoc(v any) (bson.Raw, error) {
	switch d := v.(type) {
	case bson.Raw:
		return d, nil
	case []byte:
		return d, nil
	}
	return bson.Marshal(v)
}

package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The sample frame codec.
//
// A sample of one source is a set of (metric id, value) pairs with strictly
// increasing ids (ids come from the metric_names dictionary and are > 0).
// Each sample is stored as one frame:
//
//	frame    = flags:byte body          (body raw DEFLATE when flags&flagDeflate: BestSpeed, kept only when smaller)
//	keyframe = n:uvarint entry*n        (entry ids relative to the previous entry, from 0)
//	  entry  = uvarint((idGap-1)<<1 | kind) value
//	delta    = removed changed added    (against the previous frame of the same source)
//	  removed = n:uvarint uvarint(posGap-1)*n
//	  changed = n:uvarint (uvarint((posGap-1)<<1 | kind) value)*n
//	  added   = n:uvarint entry*n       (ids not in the previous sample)
//
// Positions (pos) index the previous sample's sorted id list; posGap is the
// distance from the previous listed position (starting at -1), idGap the
// distance from the previous listed id (starting at 0).
//
// A value of kind 0 is integral (|v| <= 2^53, not -0): a zigzag varint of
// v minus a base, where the base is the previous value of the metric when
// that was integral too, else 0. A value of kind 1 is anything else
// (fractions, NaN with its payload, ±Inf, -0, huge numbers): its 8 IEEE-754
// bytes, little endian. Counters that did not move cost nothing; counters
// that moved by a little cost two or three bytes.
//
// A reader decodes a chain from its most recent keyframe; the encoder writes
// one every keyframeEvery frames.

const (
	flagKeyframe = 1 << 0
	flagDeflate  = 1 << 1
	flagsKnown   = flagKeyframe | flagDeflate // of a frame of one sample; a block's are in block.go

	kindInt   = 0
	kindFloat = 1

	// maxExact is the largest magnitude below which every integer is a float64.
	maxExact = 1 << 53

	// deflateMin is the body size from which compression is tried.
	deflateMin = 96
)

// errCorrupt reports a frame that cannot be decoded.
var errCorrupt = errors.New("corrupt sample frame")

// isIntegral reports whether v is stored as a kind 0 value.
func isIntegral(v float64) bool {
	return v == math.Trunc(v) && math.Abs(v) <= maxExact && !(v == 0 && math.Signbit(v))
}

// appendValue appends v with the kind it was given by header; prev is the
// metric's previous value, hasPrev whether there is one.
func appendValue(b []byte, v, prev float64, hasPrev bool) []byte {
	if !isIntegral(v) {
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	base := int64(0)
	if hasPrev && isIntegral(prev) {
		base = int64(prev)
	}
	return binary.AppendVarint(b, int64(v)-base)
}

func valueKind(v float64) uint64 {
	if isIntegral(v) {
		return kindInt
	}
	return kindFloat
}

// frameEncoder turns successive samples of one source into frames. It is
// owned by the store's writer goroutine.
type frameEncoder struct {
	keyframeEvery int
	frames        int // frames written so far
	ids           []int64
	vals          []float64

	body    []byte
	removed []int
	changed []int // positions in ids that changed; paired with newVal
	newVal  []float64
	added   []int  // indexes into the new sample
	frame   []byte // a compressed frame
	zip     *deflater
}

func newFrameEncoder(keyframeEvery int, zip *deflater) *frameEncoder {
	if keyframeEvery < 1 {
		keyframeEvery = 1
	}
	return &frameEncoder{keyframeEvery: keyframeEvery, zip: zip}
}

// encode returns the frame of the sample (ids strictly increasing and > 0,
// vals aligned with ids) and makes it the previous sample. The returned slice
// is valid until the next call.
func (e *frameEncoder) encode(ids []int64, vals []float64) (frame []byte, keyframe bool) {
	keyframe = e.frames%e.keyframeEvery == 0
	e.frames++
	b := append(e.body[:0], 0)
	if keyframe {
		b[0] = flagKeyframe
		b = appendEntries(b, ids, vals)
	} else {
		b = e.appendDelta(b, ids, vals) // before ids become the previous sample
	}
	e.body = b
	e.ids = append(e.ids[:0], ids...)
	e.vals = append(e.vals[:0], vals...)
	if e.zip != nil && len(b)-1 >= deflateMin {
		if z, ok := e.zip.compress(b[1:]); ok && len(z)+1 < len(b) {
			e.frame = append(append(e.frame[:0], b[0]|flagDeflate), z...)
			return e.frame, keyframe
		}
	}
	return b, keyframe
}

// follow makes ids and vals the previous sample, as if they had been
// encoded last (they were, in a block): the next frame is a delta.
func (e *frameEncoder) follow(ids []int64, vals []float64) {
	e.ids = append(e.ids[:0], ids...)
	e.vals = append(e.vals[:0], vals...)
	if e.frames%e.keyframeEvery == 0 {
		e.frames++
	}
}

// appendEntries appends the count and the entries of a whole sample.
func appendEntries(b []byte, ids []int64, vals []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	last := int64(0)
	for i, id := range ids {
		b = appendEntry(b, id, last, vals[i])
		last = id
	}
	return b
}

// appendEntry appends one entry: its id relative to the one before, and v.
func appendEntry(b []byte, id, last int64, v float64) []byte {
	b = binary.AppendUvarint(b, uint64(id-last-1)<<1|valueKind(v))
	return appendValue(b, v, 0, false)
}

// appendDelta appends the difference between the previous sample and this one.
func (e *frameEncoder) appendDelta(b []byte, ids []int64, vals []float64) []byte {
	e.removed, e.changed, e.newVal, e.added = e.removed[:0], e.changed[:0], e.newVal[:0], e.added[:0]
	i, j := 0, 0
	for i < len(e.ids) || j < len(ids) {
		switch {
		case j == len(ids) || (i < len(e.ids) && e.ids[i] < ids[j]):
			e.removed = append(e.removed, i)
			i++
		case i == len(e.ids) || ids[j] < e.ids[i]:
			e.added = append(e.added, j)
			j++
		default:
			if math.Float64bits(e.vals[i]) != math.Float64bits(vals[j]) {
				e.changed = append(e.changed, i)
				e.newVal = append(e.newVal, vals[j])
			}
			i++
			j++
		}
	}
	b = binary.AppendUvarint(b, uint64(len(e.removed)))
	last := -1
	for _, pos := range e.removed {
		b = binary.AppendUvarint(b, uint64(pos-last-1))
		last = pos
	}
	b = binary.AppendUvarint(b, uint64(len(e.changed)))
	last = -1
	for k, pos := range e.changed {
		v := e.newVal[k]
		b = binary.AppendUvarint(b, uint64(pos-last-1)<<1|valueKind(v))
		b = appendValue(b, v, e.vals[pos], true)
		last = pos
	}
	b = binary.AppendUvarint(b, uint64(len(e.added)))
	lastID := int64(0)
	for _, j := range e.added {
		b = appendEntry(b, ids[j], lastID, vals[j])
		lastID = ids[j]
	}
	return b
}

// frameDecoder rebuilds successive samples of one source from frames, starting
// at a keyframe. After decode, ids and vals hold the sample.
type frameDecoder struct {
	ids   []int64
	vals  []float64
	ready bool // a keyframe has been decoded

	nextIDs  []int64
	nextVals []float64
	removed  []bool
	zip      inflater

	block bool      // the last frame decoded was a block: its samples are in blk
	blk   blockData // see blockSample
	zbuf  []byte
}

// samples returns how many samples the last frame decoded holds.
func (d *frameDecoder) samples() int {
	if d.block {
		return d.blk.n
	}
	return 1
}

// decode applies one frame.
func (d *frameDecoder) decode(frame []byte) error {
	d.block = false
	if len(frame) > 0 && frame[0]&flagBlock != 0 {
		if frame[0]&^(flagBlock|flagZstd) != 0 {
			d.ready = false
			return fmt.Errorf("decode frame: %w: bad flags", errCorrupt)
		}
		if err := d.decodeBlock(frame[0], frame[1:]); err != nil {
			d.ready = false
			return fmt.Errorf("decode block: %w: %v", errCorrupt, err)
		}
		d.block, d.ready = true, true
		d.blockSample(d.blk.n - 1) // the sample a delta frame after the block follows
		return nil
	}
	if len(frame) == 0 || frame[0]&^flagsKnown != 0 {
		return fmt.Errorf("decode frame: %w: bad flags", errCorrupt)
	}
	body := frame[1:]
	if frame[0]&flagDeflate != 0 {
		var err error
		if body, err = d.zip.decompress(body); err != nil {
			return fmt.Errorf("decode frame: %w: %v", errCorrupt, err)
		}
	}
	r := frameReader{b: body}
	var err error
	if frame[0]&flagKeyframe != 0 {
		err = d.decodeKeyframe(&r)
	} else if !d.ready {
		return fmt.Errorf("decode frame: %w: delta without a keyframe", errCorrupt)
	} else {
		err = d.decodeDelta(&r)
	}
	if err == nil && len(r.b) != 0 {
		err = errors.New("trailing bytes")
	}
	if err != nil {
		d.ready = false
		return fmt.Errorf("decode frame: %w: %v", errCorrupt, err)
	}
	d.ready = true
	return nil
}

func (d *frameDecoder) decodeKeyframe(r *frameReader) error {
	ids, vals, err := readEntries(r, d.ids[:0], d.vals[:0])
	d.ids, d.vals = ids, vals
	return err
}

// readEntries reads n and n entries, appending them to ids and vals.
func readEntries(r *frameReader, ids []int64, vals []float64) ([]int64, []float64, error) {
	n, err := r.count()
	if err != nil {
		return ids, vals, err
	}
	last := int64(0)
	for ; n > 0; n-- {
		h, err := r.uvarint()
		if err != nil {
			return ids, vals, err
		}
		gap := h >> 1
		if gap >= math.MaxInt64-uint64(last) {
			return ids, vals, errors.New("id out of range")
		}
		last += int64(gap) + 1
		v, err := r.value(h&1, 0, false)
		if err != nil {
			return ids, vals, err
		}
		ids = append(ids, last)
		vals = append(vals, v)
	}
	return ids, vals, nil
}

func (d *frameDecoder) decodeDelta(r *frameReader) error {
	prev := len(d.ids)
	if cap(d.removed) < prev {
		d.removed = make([]bool, prev)
	}
	d.removed = d.removed[:prev]
	clear(d.removed)
	nrm, err := r.count()
	if err != nil {
		return err
	}
	last := -1
	for ; nrm > 0; nrm-- {
		gap, err := r.uvarint()
		if err != nil {
			return err
		}
		pos, err := advance(&last, prev, gap)
		if err != nil {
			return err
		}
		d.removed[pos] = true
	}
	nch, err := r.count()
	if err != nil {
		return err
	}
	last = -1
	for ; nch > 0; nch-- {
		h, err := r.uvarint()
		if err != nil {
			return err
		}
		pos, err := advance(&last, prev, h>>1)
		if err != nil {
			return err
		}
		if d.removed[pos] {
			return errors.New("change of a removed metric")
		}
		if d.vals[pos], err = r.value(h&1, d.vals[pos], true); err != nil {
			return err
		}
	}
	addIDs, addVals, err := readEntries(r, d.nextIDs[:0], d.nextVals[:0])
	d.nextIDs, d.nextVals = addIDs, addVals
	if err != nil {
		return err
	}
	return d.merge(addIDs, addVals)
}

// merge keeps the metrics not removed and merges in the added ones.
func (d *frameDecoder) merge(addIDs []int64, addVals []float64) error {
	if len(addIDs) == 0 {
		k := 0
		for i := range d.ids {
			if !d.removed[i] {
				d.ids[k], d.vals[k] = d.ids[i], d.vals[i]
				k++
			}
		}
		d.ids, d.vals = d.ids[:k], d.vals[:k]
		return nil
	}
	ids := make([]int64, 0, len(d.ids)+len(addIDs))
	vals := make([]float64, 0, len(d.ids)+len(addIDs))
	j := 0
	for i, id := range d.ids {
		if d.removed[i] {
			continue
		}
		for j < len(addIDs) && addIDs[j] < id {
			ids, vals = append(ids, addIDs[j]), append(vals, addVals[j])
			j++
		}
		if j < len(addIDs) && addIDs[j] == id {
			return errors.New("added metric already present")
		}
		ids, vals = append(ids, id), append(vals, d.vals[i])
	}
	ids, vals = append(ids, addIDs[j:]...), append(vals, addVals[j:]...)
	d.ids, d.vals = ids, vals
	return nil
}

// lookup returns the value of metric id in the current sample.
func (d *frameDecoder) lookup(id int64) (float64, bool) {
	lo, hi := 0, len(d.ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if d.ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(d.ids) && d.ids[lo] == id {
		return d.vals[lo], true
	}
	return 0, false
}

// frameReader reads the parts of a frame body.
type frameReader struct{ b []byte }

func (r *frameReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, errors.New("bad uvarint")
	}
	r.b = r.b[n:]
	return v, nil
}

// count reads an entry count, bounded by the bytes left (each entry takes one).
func (r *frameReader) count() (int, error) {
	n, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)) {
		return 0, errors.New("count exceeds frame")
	}
	return int(n), nil
}

// advance moves last by gap+1 and checks the position against the size of
// the previous sample.
func advance(last *int, size int, gap uint64) (int, error) {
	if gap >= uint64(size-*last-1) {
		return 0, errors.New("position out of range")
	}
	*last += int(gap) + 1
	return *last, nil
}

func (r *frameReader) value(kind uint64, prev float64, hasPrev bool) (float64, error) {
	if kind == kindFloat {
		if len(r.b) < 8 {
			return 0, errors.New("short float")
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
		r.b = r.b[8:]
		return v, nil
	}
	d, n := binary.Varint(r.b)
	if n <= 0 {
		return 0, errors.New("bad varint")
	}
	r.b = r.b[n:]
	base := int64(0)
	if hasPrev && isIntegral(prev) {
		base = int64(prev)
	}
	v := base + d
	if v > maxExact || v < -maxExact || (d > 0 && v < base) || (d < 0 && v > base) {
		return 0, errors.New("integer out of range")
	}
	return float64(v), nil
}

// deflater compresses frame bodies; one per writer.
type deflater struct {
	w   *flate.Writer
	buf bytes.Buffer
}

func newDeflater() *deflater {
	w, err := flate.NewWriter(io.Discard, flate.BestSpeed)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return &deflater{w: w}
}

func (z *deflater) compress(b []byte) ([]byte, bool) {
	z.buf.Reset()
	z.w.Reset(&z.buf)
	if _, err := z.w.Write(b); err != nil {
		return nil, false
	}
	if err := z.w.Close(); err != nil {
		return nil, false
	}
	return z.buf.Bytes(), true
}

// inflater decompresses frame bodies; one per decoder.
type inflater struct {
	r   io.ReadCloser
	src bytes.Reader
	out bytes.Buffer
}

// maxBody bounds a decompressed body: 1,000,000 metrics would not reach it.
const maxBody = 16 << 20

func (z *inflater) decompress(b []byte) ([]byte, error) {
	z.src.Reset(b)
	if z.r == nil {
		z.r = flate.NewReader(&z.src)
	} else if err := z.r.(flate.Resetter).Reset(&z.src, nil); err != nil {
		return nil, err
	}
	z.out.Reset()
	n, err := z.out.ReadFrom(io.LimitReader(z.r, maxBody+1))
	if err != nil {
		return nil, err
	}
	if n > maxBody {
		return nil, errors.New("body too large")
	}
	return z.out.Bytes(), nil
}

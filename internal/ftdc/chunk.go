package ftdc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Chunk is one metric chunk (a type-1 document): up to a few hundred
// samples of the same metrics. The Reader reuses a Chunk and its slices for
// the next chunk, except Names and Paths, which are never changed (a chunk
// with the same schema as the one before shares them); Clone keeps one.
type Chunk struct {
	File   string    // the file it was read from
	Offset int64     // the offset of its document in File
	ID     time.Time // its _id: the time of its first sample

	// Ref is the reference document: the first sample, whole, with the
	// strings and everything else that is not a metric.
	Ref bson.Raw

	// Paths are the metrics' dotted paths in Ref, in document order (array
	// elements by index, a timestamp as PATH for its seconds and PATH.inc
	// for its increment). Names are the same but for the role sections of
	// the 8.0 sharded layout: there "common.serverStatus.uptime" is named
	// "serverStatus.uptime", as in every other layout.
	Paths []string
	Names []string

	Samples int // samples in the chunk: the reference one and one per delta

	// Values holds every metric's values, metric by metric: metric m's
	// samples are Values[m*Samples : (m+1)*Samples] (see Metric).
	Values []int64

	// Times are the samples' times in Unix milliseconds: the metric
	// TimeSource names ("serverStatus.start" or "start"), or ID for every
	// sample when Ref has neither.
	Times      []int64
	TimeSource string
}

// Metric returns the samples of metric m.
func (c *Chunk) Metric(m int) []int64 {
	return c.Values[m*c.Samples : (m+1)*c.Samples]
}

// Index returns the index of the metric named name, or -1.
func (c *Chunk) Index(name string) int {
	return slices.Index(c.Names, name)
}

// Lookup returns the samples of the metric named name, or nil.
func (c *Chunk) Lookup(name string) []int64 {
	if m := c.Index(name); m >= 0 {
		return c.Metric(m)
	}
	return nil
}

// Time returns the time of sample s.
func (c *Chunk) Time(s int) time.Time { return time.UnixMilli(c.Times[s]).UTC() }

// Clone returns a copy of c that shares nothing the Reader reuses.
func (c *Chunk) Clone() *Chunk {
	d := *c
	d.Ref = slices.Clone(c.Ref)
	d.Values = slices.Clone(c.Values)
	d.Times = slices.Clone(c.Times)
	return &d
}

// Limits on one chunk, so that hostile input cannot make the reader
// allocate without bound. Real chunks are far below them: mongod's own
// reader refuses chunks over 10 MB uncompressed.
const (
	maxChunkBytes  = 64 << 20
	maxChunkValues = 32 << 20 // metrics x samples, 256 MiB of int64
)

// decoder inflates and decodes metric chunks, reusing its buffers.
type decoder struct {
	src       bytes.Reader
	zr        io.ReadCloser
	raw       []byte
	x         extractor
	times     []int64
	maxValues int
}

// decode fills c from data, the BinData of a type-1 document.
func (d *decoder) decode(c *Chunk, data []byte) error {
	if len(data) < 4 {
		return fmt.Errorf("chunk data is %d bytes, shorter than its length prefix", len(data))
	}
	n := int64(binary.LittleEndian.Uint32(data))
	// zlib cannot expand data more than about 1032 times.
	if n > maxChunkBytes || n > int64(len(data))*1100+64 {
		return fmt.Errorf("chunk claims %d bytes uncompressed from %d compressed", n, len(data)-4)
	}
	raw, err := d.inflate(data[4:], int(n))
	if err != nil {
		return err
	}
	if len(raw) < 5 {
		return fmt.Errorf("chunk of %d bytes has no reference document", len(raw))
	}
	refLen := int(int32(binary.LittleEndian.Uint32(raw)))
	if refLen < 5 || refLen > len(raw)-8 {
		return fmt.Errorf("reference document length %d does not fit the chunk's %d bytes", refLen, len(raw))
	}
	ref := raw[:refLen]
	metrics := int(binary.LittleEndian.Uint32(raw[refLen:]))
	deltas := int(binary.LittleEndian.Uint32(raw[refLen+4:]))
	if err := d.x.extract(ref); err != nil {
		return fmt.Errorf("reference document: %w", err)
	}
	if metrics != len(d.x.values) {
		return fmt.Errorf("metricsCount is %d but the reference document has %d metrics", metrics, len(d.x.values))
	}
	samples := deltas + 1
	limit := d.maxValues
	if limit <= 0 {
		limit = maxChunkValues
	}
	// A chunk without metrics still has a time per sample.
	if deltas < 0 || uint64(max(metrics, 1))*uint64(samples) > uint64(limit) {
		return fmt.Errorf("%d metrics x %d samples is over the limit of %d values", metrics, samples, limit)
	}
	c.Ref = ref
	c.Paths, c.Names = d.x.paths, d.x.names
	c.Samples = samples
	c.Values = slices.Grow(c.Values[:0], metrics*samples)[:metrics*samples]
	if err := decodeDeltas(c.Values, d.x.values, samples, raw[refLen+8:]); err != nil {
		return err
	}
	d.setTimes(c)
	return nil
}

// inflate returns the n bytes zlib gives for data, or an error if it gives
// another number of bytes or fails its checksum.
func (d *decoder) inflate(data []byte, n int) ([]byte, error) {
	d.src.Reset(data)
	var err error
	if d.zr == nil {
		d.zr, err = zlib.NewReader(&d.src)
	} else {
		err = d.zr.(zlib.Resetter).Reset(&d.src, nil)
	}
	if err != nil {
		d.zr = nil
		return nil, fmt.Errorf("zlib: %w", err)
	}
	d.raw = slices.Grow(d.raw[:0], n+1)[:n+1]
	got, err := io.ReadFull(d.zr, d.raw)
	if err == nil {
		return nil, fmt.Errorf("zlib gives more than the %d bytes the chunk claims", n)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	if got != n {
		return nil, fmt.Errorf("zlib gives %d bytes, the chunk claims %d", got, n)
	}
	return d.raw[:n], nil
}

// decodeDeltas fills out (metric by metric, samples values each) from the
// reference values ref and the delta stream: per metric, samples-1 unsigned
// varints, each added to the value before; a 0 is followed by a varint k
// and stands for k+1 zero deltas, a run that may go on into the metrics
// after. The stream must end exactly at the end of the last metric.
func decodeDeltas(out, ref []int64, samples int, stream []byte) error {
	pos := 0
	var zeros uint64
	for m, first := range ref {
		col := out[m*samples : (m+1)*samples]
		acc := uint64(first)
		col[0] = first
		for s := 1; s < samples; {
			if zeros > 0 {
				n := uint64(samples - s)
				if zeros < n {
					n = zeros
				}
				v := int64(acc)
				seg := col[s : s+int(n)]
				for i := range seg {
					seg[i] = v
				}
				s += int(n)
				zeros -= n
				continue
			}
			if pos >= len(stream) {
				return fmt.Errorf("deltas end at metric %d of %d, sample %d of %d", m, len(ref), s, samples)
			}
			var delta uint64
			if b := stream[pos]; b < 0x80 {
				delta = uint64(b)
				pos++
			} else {
				var ok bool
				delta, pos, ok = uvarint(stream, pos)
				if !ok {
					return fmt.Errorf("bad varint at byte %d of the deltas", pos)
				}
			}
			if delta == 0 {
				var ok bool
				zeros, pos, ok = uvarint(stream, pos)
				if !ok {
					return fmt.Errorf("bad zero-run length at byte %d of the deltas", pos)
				}
			}
			acc += delta
			col[s] = int64(acc)
			s++
		}
	}
	if zeros != 0 {
		return fmt.Errorf("a run of zero deltas goes %d past the last metric", zeros)
	}
	if pos != len(stream) {
		return fmt.Errorf("%d bytes after the last delta", len(stream)-pos)
	}
	return nil
}

// uvarint reads an unsigned LEB128 varint of at most 10 bytes at b[pos:].
func uvarint(b []byte, pos int) (uint64, int, bool) {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if pos >= len(b) {
			return 0, pos, false
		}
		c := b[pos]
		pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, pos, true
		}
	}
	return 0, pos, false
}

// setTimes fills c.Times from serverStatus.start, else start, else c.ID.
func (d *decoder) setTimes(c *Chunk) {
	for _, name := range [...]string{"serverStatus.start", "start"} {
		if m := c.Index(name); m >= 0 {
			c.Times, c.TimeSource = c.Metric(m), name
			return
		}
	}
	d.times = slices.Grow(d.times[:0], c.Samples)[:c.Samples]
	id := c.ID.UnixMilli()
	for i := range d.times {
		d.times[i] = id
	}
	c.Times, c.TimeSource = d.times, "_id"
}

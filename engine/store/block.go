package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The block codec: many samples of one source in one row.
//
// A block is self-contained (it needs no frame before it) and, once
// decoded, leaves its last sample as the previous sample of the delta
// frame that may follow it. Its row's ts is its first sample's time.
//
//	block   = flags:byte n:uvarint body  (flags = flagBlock, |flagZstd when body is zstd-compressed)
//	body    = unit:byte gap*(n-1) m:uvarint idgap*m column*m
//	  gap   = varint(g[i]/10^unit - g[i-1]/10^unit)   g[i] = ts[i+1]-ts[i] > 0, g[-1] = 0
//	  idgap = uvarint(id - previous id - 1)            (ids strictly increasing, from 0)
//	column  = hdr:uvarint [bitmap] value*present
//	  hdr   = absent<<0 | mixed<<1
//	  bitmap: ceil(n/8) bytes, bit s%8 of byte s/8 set when sample s has the metric
//	  value (mixed = 0, every value integral) = varint(v - previous present value, from 0)
//	  value (mixed = 1)                       = kind:byte then the value as in a frame (codec.go)
//
// n, the samples in the block, comes before the body so that counting
// samples need not decompress them. Laid out metric by metric, a counter's successive deltas sit side by
// side, so that zstd finds the runs: as in FTDC, whose chunks are delta
// varints column by column under zlib.

const (
	flagBlock = 1 << 2
	flagZstd  = 1 << 3

	colAbsent = 1 << 0
	colMixed  = 1 << 1

	// blockValues bounds a block (as Options.BlockSamples does): the
	// values a source's writer keeps in memory before it seals them.
	blockValues = 1 << 20
)

var (
	zstdEncOnce sync.Once
	zstdEnc     *zstd.Encoder
	zstdDecOnce sync.Once
	zstdDec     *zstd.Decoder
)

// zstdEncoder is shared: EncodeAll is safe for concurrent use.
func zstdEncoder() *zstd.Encoder {
	zstdEncOnce.Do(func() {
		var err error
		zstdEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		if err != nil {
			panic(err) // only for invalid options
		}
	})
	return zstdEnc
}

func zstdDecoder() *zstd.Decoder {
	zstdDecOnce.Do(func() {
		var err error
		zstdDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBody),
			zstd.WithDecoderLowmem(true))
		if err != nil {
			panic(err)
		}
	})
	return zstdDec
}

// blockBuilder gathers successive samples of one source until they are
// sealed into a block. A sample with the same ids as the one before shares
// its ids slice.
type blockBuilder struct {
	max    int // samples
	ts     []int64
	ids    [][]int64
	vals   [][]float64
	values int
}

func (b *blockBuilder) len() int { return len(b.ts) }

func (b *blockBuilder) reset() {
	b.ts, b.ids, b.vals, b.values = b.ts[:0], b.ids[:0], b.vals[:0], 0
	clear(b.ids[:cap(b.ids)])
	clear(b.vals[:cap(b.vals)])
}

// add appends a sample (ids sorted) and reports whether the block is full.
func (b *blockBuilder) add(ts int64, ids []int64, vals []float64) bool {
	if n := len(b.ids); n > 0 && sameIDs(b.ids[n-1], ids) {
		ids = b.ids[n-1]
	} else {
		ids = append([]int64(nil), ids...)
	}
	b.ts = append(b.ts, ts)
	b.ids = append(b.ids, ids)
	b.vals = append(b.vals, append([]float64(nil), vals...))
	b.values += len(vals)
	return len(b.ts) >= b.max || b.values >= blockValues
}

func sameIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// blockEncoder encodes blocks, reusing its buffers; one per writer.
type blockEncoder struct {
	body, frame []byte
	union       []int64
	cursor      []int
	col         []float64
	has         []bool
}

// encodeBuilt encodes the samples of b.
func (e *blockEncoder) encodeBuilt(b *blockBuilder) []byte {
	n := b.len()
	e.union = e.union[:0]
	shared := true
	for s := 1; s < n && shared; s++ {
		shared = sameIDs(b.ids[0], b.ids[s])
	}
	if shared {
		e.union = append(e.union, b.ids[0]...)
	} else {
		seen := map[int64]bool{}
		for s := range n {
			for _, id := range b.ids[s] {
				if !seen[id] {
					seen[id] = true
					e.union = append(e.union, id)
				}
			}
		}
		slices.Sort(e.union)
	}
	e.cursor = append(e.cursor[:0], make([]int, n)...)
	return e.encode(b.ts, e.union, func(j int, col []float64, has []bool) bool {
		id, all := e.union[j], true
		for s := range n {
			k := e.cursor[s]
			if k < len(b.ids[s]) && b.ids[s][k] == id {
				col[s], has[s] = b.vals[s][k], true
				e.cursor[s]++
			} else {
				has[s], all = false, false
			}
		}
		return all
	})
}

// encode writes the block of samples at ts (increasing) over the metrics
// ids (increasing); column fills col and has with metric j's values and
// presence, and reports whether every sample has it.
func (e *blockEncoder) encode(ts, ids []int64, column func(j int, col []float64, has []bool) bool) []byte {
	n := len(ts)
	unit := tsUnit(ts)
	b := append(e.body[:0], byte(unit))
	div, prev := pow10(unit), int64(0)
	for i := 1; i < n; i++ {
		g := (ts[i] - ts[i-1]) / div
		b = binary.AppendVarint(b, g-prev)
		prev = g
	}
	b = binary.AppendUvarint(b, uint64(len(ids)))
	last := int64(0)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-last-1))
		last = id
	}
	if cap(e.col) < n {
		e.col, e.has = make([]float64, n), make([]bool, n)
	}
	col, has := e.col[:n], e.has[:n]
	for j := range ids {
		all := column(j, col, has)
		b = appendColumn(b, col, has, all)
	}
	e.body = b
	z := zstdEncoder().EncodeAll(b, binary.AppendUvarint(append(e.frame[:0], flagBlock|flagZstd), uint64(n)))
	e.frame = z
	if len(z) < len(b)+1+binary.MaxVarintLen64 {
		return z
	}
	e.frame = append(binary.AppendUvarint(append(e.frame[:0], flagBlock), uint64(n)), b...)
	return e.frame
}

// tsUnit returns the largest power of ten (at most 10^9) that divides every
// gap between successive times.
func tsUnit(ts []int64) int {
	unit := 9
	for i := 1; i < len(ts) && unit > 0; i++ {
		g := ts[i] - ts[i-1]
		for unit > 0 && g%pow10(unit) != 0 {
			unit--
		}
	}
	return unit
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func appendColumn(b []byte, col []float64, has []bool, all bool) []byte {
	mixed := false
	for s, v := range col {
		if (all || has[s]) && !isIntegral(v) {
			mixed = true
			break
		}
	}
	hdr := uint64(0)
	if !all {
		hdr |= colAbsent
	}
	if mixed {
		hdr |= colMixed
	}
	b = binary.AppendUvarint(b, hdr)
	if !all {
		for s := 0; s < len(col); s += 8 {
			var x byte
			for k := s; k < s+8 && k < len(col); k++ {
				if has[k] {
					x |= 1 << (k - s)
				}
			}
			b = append(b, x)
		}
	}
	prev, hasPrev := 0.0, false
	for s, v := range col {
		if !all && !has[s] {
			continue
		}
		if mixed {
			b = append(b, byte(valueKind(v)))
			b = appendValue(b, v, prev, hasPrev)
		} else {
			b = binary.AppendVarint(b, int64(v)-int64(prev))
		}
		prev, hasPrev = v, true
	}
	return b
}

// blockData is a decoded block.
type blockData struct {
	ts   []int64 // offsets from the first sample's time
	ids  []int64
	vals []float64 // metric by metric: vals[j*n+s]
	has  []bool    // likewise; nil when every sample has every metric
	n    int
}

// decodeBlock decodes the body of a block frame into d.blk.
func (d *frameDecoder) decodeBlock(flags byte, body []byte) error {
	head := frameReader{b: body}
	nn, err := head.uvarint()
	if err != nil {
		return err
	}
	if nn == 0 || nn > math.MaxInt32 {
		return errors.New("bad sample count")
	}
	n := int(nn)
	body = head.b
	if flags&flagZstd != 0 {
		var err error
		d.zbuf, err = zstdDecoder().DecodeAll(body, d.zbuf[:0])
		if err != nil {
			return err
		}
		if len(d.zbuf) > maxBody {
			return errors.New("body too large")
		}
		body = d.zbuf
	}
	r := frameReader{b: body}
	if n-1 > len(r.b) { // each gap takes a byte
		return errors.New("count exceeds block")
	}
	if len(r.b) < 1 || r.b[0] > 18 {
		return errors.New("bad time unit")
	}
	div := pow10(int(r.b[0]))
	r.b = r.b[1:]
	blk := &d.blk
	blk.n = n
	blk.ts = append(blk.ts[:0], 0)
	g := int64(0)
	for i := 1; i < n; i++ {
		dg, k := binary.Varint(r.b)
		if k <= 0 {
			return errors.New("bad time gap")
		}
		r.b = r.b[k:]
		g += dg
		if g <= 0 || g > math.MaxInt64/div || blk.ts[i-1] > math.MaxInt64-g*div {
			return errors.New("time gap out of range")
		}
		blk.ts = append(blk.ts, blk.ts[i-1]+g*div)
	}
	m, err := r.count()
	if err != nil {
		return err
	}
	// Each column takes at least n/8 bytes: a bound before allocating.
	if uint64(m)*uint64(n) > 8*uint64(len(r.b))+8 {
		return errors.New("block larger than its bytes")
	}
	blk.ids = blk.ids[:0]
	last := int64(0)
	for range m {
		gap, err := r.uvarint()
		if err != nil {
			return err
		}
		if gap >= math.MaxInt64-uint64(last) {
			return errors.New("id out of range")
		}
		last += int64(gap) + 1
		blk.ids = append(blk.ids, last)
	}
	if cap(blk.vals) < m*n {
		blk.vals = make([]float64, m*n)
	}
	blk.vals = blk.vals[:m*n]
	blk.has = blk.has[:0]
	for j := range m {
		if err := d.decodeColumn(&r, j); err != nil {
			return fmt.Errorf("metric %d: %w", blk.ids[j], err)
		}
	}
	if len(r.b) != 0 {
		return errors.New("trailing bytes")
	}
	return nil
}

func (d *frameDecoder) decodeColumn(r *frameReader, j int) error {
	blk := &d.blk
	n := blk.n
	hdr, err := r.uvarint()
	if err != nil {
		return err
	}
	if hdr&^(colAbsent|colMixed) != 0 {
		return errors.New("bad column header")
	}
	col := blk.vals[j*n : (j+1)*n]
	var has []bool
	if hdr&colAbsent != 0 {
		if blk.has == nil || len(blk.has) == 0 {
			blk.has = append(blk.has[:0], make([]bool, len(blk.vals))...)
			for i := range blk.has[:j*n] {
				blk.has[i] = true
			}
		}
		has = blk.has[j*n : (j+1)*n]
		nb := (n + 7) / 8
		if len(r.b) < nb {
			return errors.New("short bitmap")
		}
		for s := range n {
			has[s] = r.b[s/8]&(1<<(s%8)) != 0
		}
		r.b = r.b[nb:]
	} else if len(blk.has) != 0 {
		has = blk.has[j*n : (j+1)*n]
		for s := range has {
			has[s] = true
		}
		has = nil
	}
	prev, hasPrev := 0.0, false
	for s := range n {
		if has != nil && !has[s] {
			col[s] = 0
			continue
		}
		var v float64
		if hdr&colMixed != 0 {
			if len(r.b) < 1 || r.b[0] > kindFloat {
				return errors.New("bad value kind")
			}
			kind := uint64(r.b[0])
			r.b = r.b[1:]
			if v, err = r.value(kind, prev, hasPrev); err != nil {
				return err
			}
		} else if v, err = r.value(kindInt, prev, hasPrev); err != nil {
			return err
		}
		col[s], prev, hasPrev = v, v, true
	}
	return nil
}

// blockSample makes sample s of the decoded block the current sample.
func (d *frameDecoder) blockSample(s int) {
	blk := &d.blk
	d.ids, d.vals = d.ids[:0], d.vals[:0]
	for j, id := range blk.ids {
		if len(blk.has) != 0 && !blk.has[j*blk.n+s] {
			continue
		}
		d.ids = append(d.ids, id)
		d.vals = append(d.vals, blk.vals[j*blk.n+s])
	}
}

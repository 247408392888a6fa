package ftdc

import (
	"encoding/binary"
	"math"
)

// roles are the top-level sections of the role-based layout mongod uses
// from 8.0 on sharded members and mongos ({start, shard, router, common,
// end}). A collector under a role is named as in the flat layout.
var roles = [...]string{"shard", "router", "common"}

func isRole(key []byte) bool {
	for _, r := range roles {
		if string(key) == r {
			return true
		}
	}
	return false
}

// extractor lists the metrics of reference documents: their values, their
// dotted paths and their names. It keeps the strings of the previous
// document, so that a chunk with the same schema as the one before allocates
// nothing and shares the previous Names and Paths slices.
type extractor struct {
	values []int64
	path   []byte

	// paths and strips of the document being walked: the name of metric i
	// is scratch[i][strips[i]:].
	scratch []string
	strips  []int
	changed bool

	// collectors seen under a role in this document.
	collectors [][]byte

	paths, names []string // of the last document
}

// extract walks ref and fills x.values, x.paths and x.names.
func (x *extractor) extract(ref []byte) error {
	x.values = x.values[:0]
	x.scratch = x.scratch[:0]
	x.strips = x.strips[:0]
	x.collectors = x.collectors[:0]
	x.changed = false
	x.path = x.path[:0]
	if err := x.walkTop(ref); err != nil {
		return err
	}
	if !x.changed && len(x.scratch) == len(x.paths) {
		return nil
	}
	x.paths = append([]string(nil), x.scratch...)
	x.names = make([]string, len(x.paths))
	for i, p := range x.paths {
		x.names[i] = p[x.strips[i]:]
	}
	return nil
}

func (x *extractor) walkTop(doc []byte) error {
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			return it.err
		}
		if e.typ == tDocument && isRole(e.key) {
			if err := x.walkRole(e); err != nil {
				return err
			}
			continue
		}
		if err := x.element(e, 0, 0); err != nil {
			return err
		}
	}
}

// walkRole walks a role section: its collectors lose the role in their
// names unless another role already had a collector of that name.
func (x *extractor) walkRole(role element) error {
	base := len(x.path)
	x.path = append(x.path, role.key...)
	strip := len(x.path) + 1
	it := newElements(role.value)
	for {
		e, ok := it.next()
		if !ok {
			x.path = x.path[:base]
			return it.err
		}
		s := 0
		if (e.typ == tDocument || e.typ == tArray) && !x.seenCollector(e.key) {
			x.collectors = append(x.collectors, e.key)
			s = strip
		}
		if err := x.element(e, 1, s); err != nil {
			return err
		}
	}
}

func (x *extractor) seenCollector(key []byte) bool {
	for _, c := range x.collectors {
		if string(c) == string(key) {
			return true
		}
	}
	return false
}

func (x *extractor) walk(doc []byte, depth, strip int) error {
	if depth > maxDepth {
		return errDepth
	}
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			return it.err
		}
		if err := x.element(e, depth, strip); err != nil {
			return err
		}
	}
}

// element adds the metrics of e, whose parent's path is in x.path.
func (x *extractor) element(e element, depth, strip int) error {
	if !isMetric(e.typ) {
		return nil
	}
	base := len(x.path)
	if base > 0 {
		x.path = append(x.path, '.')
	}
	x.path = append(x.path, e.key...)
	defer func() { x.path = x.path[:base] }()
	if e.typ == tDocument || e.typ == tArray {
		return x.walk(e.value, depth+1, strip)
	}
	n := len(x.values)
	x.values = appendMetric(x.values, e)
	x.add(strip)
	if len(x.values) == n+2 { // a timestamp: seconds, then increment
		x.path = append(x.path, ".inc"...)
		x.add(strip)
	}
	return nil
}

// appendMetric appends the metric values of the leaf e (one, or two for a
// timestamp) to vals, as mongod's FTDC compressor extracts them.
func appendMetric(vals []int64, e element) []int64 {
	v := e.value
	switch e.typ {
	case tDouble:
		return append(vals, doubleToInt64(math.Float64frombits(binary.LittleEndian.Uint64(v))))
	case tInt32:
		return append(vals, int64(int32(binary.LittleEndian.Uint32(v))))
	case tInt64, tDate:
		return append(vals, int64(binary.LittleEndian.Uint64(v)))
	case tBool:
		if v[0] != 0 {
			return append(vals, 1)
		}
		return append(vals, 0)
	case tDecimal128:
		return append(vals, decimalToInt64(v))
	case tTimestamp:
		// Stored as increment then seconds; FTDC counts seconds first.
		return append(vals, int64(binary.LittleEndian.Uint32(v[4:])), int64(binary.LittleEndian.Uint32(v)))
	}
	return vals
}

// add records a metric at x.path.
func (x *extractor) add(strip int) {
	i := len(x.scratch)
	x.strips = append(x.strips, strip)
	if i < len(x.paths) && x.paths[i] == string(x.path) && x.names[i] == x.paths[i][strip:] {
		x.scratch = append(x.scratch, x.paths[i])
		return
	}
	x.changed = true
	x.scratch = append(x.scratch, string(x.path))
}

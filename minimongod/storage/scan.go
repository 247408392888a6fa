package storage

import (
	"bytes"

	"wtd/minimongod/wt"
)

// Bound is one end of a key range over encoded keys. A nil Key is
// unbounded. Keys that start with Key count as equal to it, so a bound on
// an index value covers every entry of that value.
type Bound struct {
	Key       []byte
	Inclusive bool
}

// Range is an interval of encoded keys.
type Range struct{ Lo, Hi Bound }

// Scan walks a collection's table or one of its indexes over ranges in key
// order (or reverse), yielding table keys and documents. Between client
// requests it holds no WiredTiger cursor: Detach, and the next call resumes
// after the last key returned, from any session.
type Scan struct {
	c       *Collection
	ix      *Index // nil: the collection table
	ranges  []Range
	reverse bool

	cur     *wt.Cursor
	ri      int    // current range
	last    []byte // last key returned, for resuming
	started bool   // the current range has been entered
	done    bool
	// Examined counts keys looked at.
	Examined int64
}

// NewScan scans c's table (ix nil) or index ix over ranges, which must be
// sorted and disjoint; no ranges means everything.
func NewScan(c *Collection, ix *Index, ranges []Range, reverse bool) *Scan {
	if len(ranges) == 0 {
		ranges = []Range{{}}
	}
	if reverse {
		r := make([]Range, len(ranges))
		for i := range ranges {
			r[i] = ranges[len(ranges)-1-i]
		}
		ranges = r
	}
	return &Scan{c: c, ix: ix, ranges: ranges, reverse: reverse}
}

// Collection returns the scanned collection.
func (sc *Scan) Collection() *Collection { return sc.c }

// Detach closes the scan's cursor; the scan resumes where it was.
func (sc *Scan) Detach() {
	if sc.cur != nil {
		sc.cur.Close()
		sc.cur = nil
	}
}

func cmpBound(k, b []byte) int {
	if bytes.HasPrefix(k, b) {
		return 0
	}
	return bytes.Compare(k, b)
}

func (r Range) aboveLo(k []byte) bool {
	if r.Lo.Key == nil {
		return true
	}
	c := cmpBound(k, r.Lo.Key)
	return c > 0 || (c == 0 && r.Lo.Inclusive)
}

func (r Range) belowHi(k []byte) bool {
	if r.Hi.Key == nil {
		return true
	}
	c := cmpBound(k, r.Hi.Key)
	return c < 0 || (c == 0 && r.Hi.Inclusive)
}

// Next returns the next table key and document; wt.ErrNotFound at the end.
// Both slices are valid until the session's next operation.
func (sc *Scan) Next(s *Session) (pk, doc []byte, err error) {
	for !sc.done {
		k, err := sc.step(s)
		if err == wt.ErrNotFound {
			sc.ri++
			sc.started = false
			if sc.ri >= len(sc.ranges) {
				sc.done = true
				sc.Detach()
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		sc.last = append(sc.last[:0], k...)
		sc.Examined++
		if sc.ix == nil {
			_, v, err := sc.cur.KeyValue()
			return k, v, err
		}
		_, pkv, err := sc.cur.KeyValue()
		if err != nil {
			return nil, nil, err
		}
		pk = append([]byte(nil), pkv...)
		doc, err := sc.c.Get(s, pk)
		if err == wt.ErrNotFound {
			continue // removed since the index entry was read
		}
		return pk, doc, err
	}
	return nil, nil, wt.ErrNotFound
}

func (sc *Scan) uri() string {
	if sc.ix != nil {
		return sc.ix.URI()
	}
	return sc.c.URI()
}

// step moves to the next key within the current range.
func (sc *Scan) step(s *Session) ([]byte, error) {
	r := sc.ranges[sc.ri]
	if sc.cur == nil {
		cur, err := s.ws.OpenCursor(sc.uri(), "")
		if err != nil {
			return nil, err
		}
		sc.cur = cur
		if sc.started {
			if err := sc.seekAfter(sc.last); err != nil {
				return nil, err
			}
			return sc.check(r)
		}
	}
	if !sc.started {
		sc.started = true
		if err := sc.seekStart(r); err != nil {
			return nil, err
		}
		return sc.check(r)
	}
	if err := sc.move(); err != nil {
		return nil, err
	}
	return sc.check(r)
}

func (sc *Scan) move() error {
	if sc.reverse {
		return sc.cur.Prev()
	}
	return sc.cur.Next()
}

// check returns the cursor's key if it is inside r, else ErrNotFound.
func (sc *Scan) check(r Range) ([]byte, error) {
	k, err := sc.cur.Key()
	if err != nil {
		return nil, err
	}
	if sc.reverse {
		if !r.aboveLo(k) {
			return nil, wt.ErrNotFound
		}
		return k, nil
	}
	if !r.belowHi(k) {
		return nil, wt.ErrNotFound
	}
	return k, nil
}

// seekStart positions the cursor on the first key of r in scan order.
func (sc *Scan) seekStart(r Range) error {
	if !sc.reverse {
		if r.Lo.Key == nil {
			return sc.cur.Next()
		}
		if _, err := sc.cur.SearchNear(r.Lo.Key); err != nil {
			return err
		}
		return sc.forwardWhile(func(k []byte) bool { return !r.aboveLo(k) }, true)
	}
	if r.Hi.Key == nil {
		return sc.cur.Prev()
	}
	if _, err := sc.cur.SearchNear(r.Hi.Key); err != nil {
		return err
	}
	// Go past every key that is not above Hi, then come back.
	for {
		k, err := sc.cur.Key()
		if err != nil {
			return err
		}
		if !r.belowHi(k) {
			break
		}
		if err := sc.cur.Next(); err == wt.ErrNotFound {
			return sc.cur.Prev()
		} else if err != nil {
			return err
		}
	}
	for {
		k, err := sc.cur.Key()
		if err != nil {
			return err
		}
		if r.belowHi(k) {
			return nil
		}
		if err := sc.cur.Prev(); err != nil {
			return err
		}
	}
}

// forwardWhile moves forward (or from a search_near position, which may be
// before the target) while skip(key) holds.
func (sc *Scan) forwardWhile(skip func([]byte) bool, _ bool) error {
	for {
		k, err := sc.cur.Key()
		if err != nil {
			return err
		}
		if !skip(k) {
			return nil
		}
		if err := sc.cur.Next(); err != nil {
			return err
		}
	}
}

// seekAfter positions the cursor on the first key after last in scan order.
func (sc *Scan) seekAfter(last []byte) error {
	if _, err := sc.cur.SearchNear(last); err != nil {
		return err
	}
	for {
		k, err := sc.cur.Key()
		if err != nil {
			return err
		}
		c := bytes.Compare(k, last)
		if (!sc.reverse && c > 0) || (sc.reverse && c < 0) {
			return nil
		}
		if err := sc.move(); err != nil {
			return err
		}
	}
}

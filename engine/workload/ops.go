package workload

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// KeyPlaceholder, as a string value anywhere in a query's filter, stands
// for a key drawn from the workload's distribution (an int64 _id), drawn
// afresh for each operation; every placeholder of one operation gets the
// same key.
const KeyPlaceholder = "$key"

// QuerySpec is the request of a query operation: a find of Filter, sorted
// by Sort and limited to Limit documents (0: all), whose cursor is read to
// its end; or, with Count, a count command of Filter (and Limit).
type QuerySpec struct {
	Filter bson.D `json:"filter"`
	Sort   bson.D `json:"sort,omitempty"`
	Limit  int64  `json:"limit,omitempty"`
	Count  bool   `json:"count,omitempty"`
}

// Scan lengths.
const (
	DefaultScanMax = 100
	MaxScanMax     = 100000
)

// Sentinels marking where a request template's drawn values go: int64
// values no request holds otherwise.
const (
	keySlot   int64 = 0x5f59454b5f647477 // "wtd_KEY_" in little-endian bytes
	limitSlot int64 = 0x5f4d494c5f647477 // "wtd_LIM_"
)

// cmdTemplate is a request encoded once, with the offsets of the int64
// values that each operation sets: keys (drawn _ids) and limits.
type cmdTemplate struct {
	doc            []byte
	keys, limitsAt []int
}

// newCmdTemplate encodes d, which holds keySlot and limitSlot where drawn
// values go, and checks that it found keys and limits of them (-1: any
// number of keys).
func newCmdTemplate(d bson.D, keys, limits int) (*cmdTemplate, error) {
	doc, err := bson.Marshal(d)
	if err != nil {
		return nil, err
	}
	c := &cmdTemplate{doc: doc, keys: slotOffsets(doc, keySlot), limitsAt: slotOffsets(doc, limitSlot)}
	if (keys >= 0 && len(c.keys) != keys) || len(c.limitsAt) != limits {
		return nil, errors.New("the request holds a value wtd reserves for its own use")
	}
	return c, nil
}

func slotOffsets(doc []byte, slot int64) []int {
	var pat [8]byte
	binary.LittleEndian.PutUint64(pat[:], uint64(slot))
	var at []int
	for i := 0; ; {
		j := bytes.Index(doc[i:], pat[:])
		if j < 0 {
			return at
		}
		at = append(at, i+j)
		i += j + 8
	}
}

// cmdBuffer is one thread's copy of a template; arg wraps it once, so
// that issuing it allocates nothing on wtd's side.
type cmdBuffer struct {
	t   *cmdTemplate
	doc []byte
	arg any
}

func (c *cmdTemplate) buffer() *cmdBuffer {
	doc := bytes.Clone(c.doc)
	return &cmdBuffer{t: c, doc: doc, arg: bson.Raw(doc)}
}

// set writes key and limit into the buffer's slots.
func (b *cmdBuffer) set(key, limit int64) {
	for _, at := range b.t.keys {
		binary.LittleEndian.PutUint64(b.doc[at:], uint64(key))
	}
	for _, at := range b.t.limitsAt {
		binary.LittleEndian.PutUint64(b.doc[at:], uint64(limit))
	}
}

// withKeySlots returns v with every KeyPlaceholder string replaced by
// keySlot.
func withKeySlots(v any) any {
	switch x := v.(type) {
	case string:
		if x == KeyPlaceholder {
			return keySlot
		}
	case bson.D:
		out := make(bson.D, len(x))
		for i, e := range x {
			out[i] = bson.E{Key: e.Key, Value: withKeySlots(e.Value)}
		}
		return out
	case bson.M:
		out := bson.M{}
		for k, e := range x {
			out[k] = withKeySlots(e)
		}
		return out
	case map[string]any:
		return withKeySlots(bson.M(x))
	case bson.A:
		return bson.A(withKeySlots([]any(x)).([]any))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withKeySlots(e)
		}
		return out
	}
	return v
}

// checkOps checks the fields of scans, queries, the warm-up, the rate and
// the watch, and builds the request templates.
func (w *workloadRun) checkOps(s *Spec, coll string) error {
	if w.used[opScan] {
		if s.ScanMax == 0 {
			s.ScanMax = DefaultScanMax
		}
		if err := checkRange("scan_max", int64(s.ScanMax), 1, MaxScanMax); err != nil {
			return err
		}
		scan := bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: keySlot}}}}},
			{Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "limit", Value: limitSlot}, {Key: "batchSize", Value: limitSlot},
			{Key: "singleBatch", Value: true}}
		var err error
		if w.scan, err = newCmdTemplate(scan, 1, 2); err != nil {
			return err
		}
	}
	switch {
	case w.used[opQuery] && s.Query == nil:
		return errors.New("the mix has queries but no query is given (query = { filter = ... })")
	case !w.used[opQuery] && s.Query != nil:
		return errors.New("a query is given but the mix has no queries: give mix.query a weight > 0")
	case s.Query != nil:
		if err := w.checkQuery(*s.Query, coll); err != nil {
			return err
		}
	}
	if err := checkWarmup(*s); err != nil {
		return err
	}
	if err := w.checkRate(s); err != nil {
		return err
	}
	return checkWatch(s)
}

// checkQuery builds the query's request template.
func (w *workloadRun) checkQuery(q QuerySpec, coll string) error {
	if q.Limit < 0 {
		return fmt.Errorf("query.limit %d out of range [0, 2^63-1]", q.Limit)
	}
	filter := withKeySlots(q.Filter)
	if filter == nil {
		filter = bson.D{}
	}
	var cmd bson.D
	if q.Count {
		if len(q.Sort) > 0 {
			return errors.New("query.sort has no meaning for a count: drop it or set count = false")
		}
		cmd = bson.D{{Key: "count", Value: coll}, {Key: "query", Value: filter}}
		if q.Limit > 0 {
			cmd = append(cmd, bson.E{Key: "limit", Value: q.Limit})
		}
	} else {
		cmd = bson.D{{Key: "filter", Value: filter}}
		w.findOpts = options.Find()
		if len(q.Sort) > 0 {
			w.findOpts.SetSort(q.Sort)
		}
		if q.Limit > 0 {
			w.findOpts.SetLimit(q.Limit)
		}
	}
	t, err := newCmdTemplate(cmd, -1, 0)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if !q.Count { // the template is the filter alone
		raw := bson.Raw(t.doc).Lookup("filter").Document()
		t = &cmdTemplate{doc: raw, keys: slotOffsets(raw, keySlot)}
	}
	w.query = t
	return nil
}

// needsKeys reports whether the mix draws keys: reads, updates, scans,
// read-modify-writes, and queries with a KeyPlaceholder.
func (w *workloadRun) needsKeys() bool {
	return w.used[opRead] || w.used[opUpdate] || w.used[opScan] || w.used[opRMW] ||
		(w.used[opQuery] && len(w.query.keys) > 0)
}

// keyOptions says what the spec's reads, updates, scans and queries draw
// their keys from: the working set, with the latest distribution counting
// back from the newest _id (all keys, growing with the inserts, unless a
// smaller working set fixes the count).
func (s Spec) keyOptions() keyOptions {
	o := keyOptions{dist: s.Distribution, items: s.WorkingSetKeys, hotFraction: s.HotFraction, hotOps: s.HotOps}
	if s.Distribution == DistLatest {
		first := s.InsertStartID
		if first == 0 {
			first = s.KeySpace
		}
		o.newest, o.grow = first-1, s.WorkingSetKeys == s.KeySpace
	}
	return o
}

// moreBuffers are one thread's requests of scans and queries.
type moreBuffers struct {
	scan, query *cmdBuffer
}

// newMoreBuffers makes the buffers of the ops beyond reads, updates and
// inserts; a read-modify-write uses b's filter and update.
func (w *workloadRun) newMoreBuffers(t *workloadThread, b *opBuffers) *moreBuffers {
	m := &moreBuffers{}
	if w.scan != nil {
		m.scan = w.scan.buffer()
	}
	if w.query != nil {
		m.query = w.query.buffer()
	}
	if w.used[opRMW] && b.update == nil {
		b.update, b.updateAt = newPadUpdate(w.padLen, &t.pad)
		b.updateArg = bson.Raw(b.update)
	}
	return m
}

// prepareUpdate draws the _id of an update and fills b's filter and new
// random bytes for it.
func (w *workloadRun) prepareUpdate(t *workloadThread, b *opBuffers) int64 {
	id := w.keys.pick(t.rng)
	setFilterID(b.filter, id)
	t.pad.fill(b.update[b.updateAt : b.updateAt+w.padLen])
	return id
}

// updateOne issues the update b holds; an _id that matches no document is
// errNoSuchDocument.
func (w *workloadRun) updateOne(ctx context.Context, b *opBuffers) error {
	res, err := w.coll.UpdateOne(ctx, b.filterArg, b.updateArg)
	if err == nil && res.MatchedCount == 0 {
		err = errNoSuchDocument
	}
	return err
}

// insertedID returns the _id of the insert b holds.
func insertedID(b *opBuffers) int64 {
	return int64(binary.LittleEndian.Uint64(b.insert[idFilterValueAt:]))
}

// doMore prepares and issues a scan, read-modify-write or query (see do).
func (w *workloadRun) doMore(ctx context.Context, t *workloadThread, b *opBuffers, op opKind) (time.Time, error) {
	m := b.more
	switch op {
	case opScan:
		id := w.keys.pick(t.rng)
		m.scan.set(id, 1+int64(boundedUint64(t.rng.Uint64(), uint64(w.spec.ScanMax))))
		began := time.Now()
		reply, err := w.coll.Database().RunCommand(ctx, m.scan.arg).Raw()
		if err != nil {
			return began, fmt.Errorf("scan from _id %d: %w", id, err)
		}
		t.countDocs(op, batchLen(reply))
		return began, nil
	case opRMW:
		id := w.prepareUpdate(t, b)
		began := time.Now()
		err := w.coll.FindOne(ctx, b.filterArg).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			err = errNoSuchDocument
		}
		if err == nil {
			err = w.updateOne(ctx, b)
		}
		if err != nil {
			return began, fmt.Errorf("read-modify-write _id %d: %w", id, err)
		}
		return began, nil
	default:
		return w.doQuery(ctx, t, m)
	}
}

// doQuery issues a query: a count, or a find whose cursor it reads to the
// end.
func (w *workloadRun) doQuery(ctx context.Context, t *workloadThread, m *moreBuffers) (time.Time, error) {
	var id int64 = -1
	if len(w.query.keys) > 0 {
		id = w.keys.pick(t.rng)
		m.query.set(id, 0)
	}
	fail := func(err error) error {
		if id >= 0 {
			return fmt.Errorf("query with key %d: %w", id, err)
		}
		return fmt.Errorf("query: %w", err)
	}
	began := time.Now()
	if w.spec.Query.Count {
		reply, err := w.coll.Database().RunCommand(ctx, m.query.arg).Raw()
		if err != nil {
			return began, fail(err)
		}
		n, _ := reply.Lookup("n").AsInt64OK()
		t.countDocs(opQuery, n)
		return began, nil
	}
	cur, err := w.coll.Find(ctx, m.query.arg, w.findOpts)
	if err != nil {
		return began, fail(err)
	}
	var n int64
	for cur.Next(ctx) {
		n++
	}
	err = cur.Err()
	cur.Close(ctx)
	if err != nil {
		return began, fail(err)
	}
	t.countDocs(opQuery, n)
	return began, nil
}

// countDocs adds the documents an operation returned.
func (t *workloadThread) countDocs(op opKind, n int64) {
	if t.measuring {
		t.docs[op] += n
	}
}

// batchLen returns how many documents a find reply's first batch holds.
func batchLen(reply bson.Raw) int64 {
	arr, ok := reply.Lookup("cursor", "firstBatch").ArrayOK()
	if !ok || len(arr) < 5 {
		return 0
	}
	var n int64
	for rem := []byte(arr)[4:]; len(rem) > 1; n++ {
		var ok bool
		if _, rem, ok = bsoncore.ReadElement(rem); !ok {
			break
		}
	}
	return n
}

package server

import (
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mlog"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

// ttlBatchSize is how many expired documents one write ticket covers;
// each is deleted in its own transaction.
const ttlBatchSize = 500

// ttlLoop is the TTL monitor: a pass every ttlMonitorSleepSecs while
// ttlMonitorEnabled, until bgStop closes.
func (s *Server) ttlLoop() {
	defer s.bgDone.Done()
	sess, err := s.eng.NewSession()
	if err != nil {
		s.log.Error("INDEX", 22430, "TTLMonitor", "cannot open TTL monitor session", mlog.A("error", err.Error()))
		return
	}
	defer sess.Close()
	last := time.Now()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.bgStop:
			return
		case <-t.C:
		}
		enabled, secs := s.params.ttl()
		if time.Since(last) < time.Duration(secs)*time.Second {
			continue
		}
		last = time.Now()
		if enabled {
			s.ttlPass(sess)
		}
	}
}

func (s *Server) stopping() bool {
	select {
	case <-s.bgStop:
		return true
	default:
		return false
	}
}

// ttlIndex is one TTL index to work through.
type ttlIndex struct {
	coll *storage.Collection
	ix   *storage.Index
	secs int64
}

// ttlPass deletes the expired documents of every TTL index.
func (s *Server) ttlPass(sess *storage.Session) {
	s.stats.ttlPasses.Add(1)
	for _, job := range s.ttlIndexes(sess) {
		if s.stopping() {
			return
		}
		s.ttlDeleteExpired(sess, job)
	}
}

// ttlIndexes lists the single-field indexes with expireAfterSeconds.
func (s *Server) ttlIndexes(sess *storage.Session) []ttlIndex {
	sess.Lock()
	defer sess.Unlock()
	var out []ttlIndex
	for _, c := range s.eng.Collections("") {
		for _, ix := range c.Indexes() {
			if ix.ExpireAfterSeconds != nil && len(ix.Fields) == 1 {
				out = append(out, ttlIndex{coll: c, ix: ix, secs: *ix.ExpireAfterSeconds})
			}
		}
	}
	return out
}

func dateValue(ms int64) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeDateTime, Data: bsoncore.AppendDateTime(nil, ms)}
}

// ttlDeleteExpired deletes, through the index, every document whose
// indexed date is at or before now - expireAfterSeconds, as one operation
// (visible to currentOp and killOp), in batches of ttlBatchSize under one
// write ticket. The loop ends when the index range is exhausted.
func (s *Server) ttlDeleteExpired(sess *storage.Session, job ttlIndex) {
	op := s.ops.begin(&operation{desc: "TTLMonitor", opType: "remove", ns: job.coll.NS()})
	defer s.ops.end(op)
	start := time.Now()
	cutoff := start.Add(-time.Duration(job.secs) * time.Second).UnixMilli()
	r := storage.Range{
		Lo: storage.Bound{Key: keyenc.Append(nil, dateValue(math.MinInt64)), Inclusive: true},
		Hi: storage.Bound{Key: keyenc.Append(nil, dateValue(cutoff)), Inclusive: true},
	}
	scan := storage.NewScan(job.coll, job.ix, []storage.Range{r}, false)
	var total int64
	for !s.stopping() {
		n, more, err := s.ttlBatch(sess, op, job, scan, cutoff)
		total += n
		if err != nil {
			s.log.Warning("INDEX", 22543, "TTLMonitor", "Error during TTL pass", mlog.A("namespace", job.coll.NS()), mlog.A("index", job.ix.Name), mlog.A("error", err.Error()))
			break
		}
		if !more {
			break
		}
	}
	if total > 0 {
		s.log.Info("INDEX", 5479200, "TTLMonitor", "Deleted expired documents using index", mlog.A("namespace", job.coll.NS()),
			mlog.A("index", job.ix.Name), mlog.A("numDeleted", total), mlog.A("durationMillis", time.Since(start).Milliseconds()))
	}
}

// ttlBatch reads up to ttlBatchSize expired entries and deletes their
// documents, holding one write ticket; more reports whether the scan has
// entries left.
func (s *Server) ttlBatch(sess *storage.Session, op *operation, job ttlIndex, scan *storage.Scan, cutoff int64) (n int64, more bool, err error) {
	release, err := s.takeTicket(op, writeTicket)
	if err != nil {
		return 0, false, err
	}
	defer release()
	sess.Lock()
	defer sess.Unlock()
	if s.eng.Collection(job.coll.DB, job.coll.Name) != job.coll || job.coll.Index(job.ix.Name) != job.ix {
		return 0, false, nil // dropped since the pass began
	}
	pks, more, err := expiredKeys(sess, scan)
	if err != nil {
		return 0, false, err
	}
	path := job.ix.Fields[0].Path
	for _, pk := range pks {
		ok, err := ttlDeleteOne(sess, job.coll, pk, path, cutoff)
		if err != nil {
			return n, false, err
		}
		if ok {
			n++
		}
	}
	s.stats.ttlDeleted.Add(n)
	s.stats.docDeleted.Add(n)
	s.stats.opDelete.Add(n)
	return n, more, nil
}

// expiredKeys returns the next distinct table keys of the scan (a
// multikey index lists a document once per date).
func expiredKeys(sess *storage.Session, scan *storage.Scan) (pks [][]byte, more bool, err error) {
	defer scan.Detach()
	seen := map[string]bool{}
	for len(pks) < ttlBatchSize {
		pk, _, err := scan.Next(sess)
		if err == wt.ErrNotFound {
			return pks, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if !seen[string(pk)] {
			seen[string(pk)] = true
			pks = append(pks, append([]byte(nil), pk...))
		}
	}
	return pks, true, nil
}

// ttlDeleteOne deletes the document under pk in its own transaction if
// its date (the earliest, for an array) is still at or before cutoff.
// A write conflict is retried a few times, then left to the next pass.
func ttlDeleteOne(sess *storage.Session, coll *storage.Collection, pk []byte, path string, cutoff int64) (bool, error) {
	for attempt := 0; attempt < 10; attempt++ {
		deleted, err := ttlDeleteTxn(sess, coll, pk, path, cutoff)
		if err == nil || !wt.IsRollback(err) {
			return deleted, err
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Microsecond)
	}
	return false, nil
}

func ttlDeleteTxn(sess *storage.Session, coll *storage.Collection, pk []byte, path string, cutoff int64) (bool, error) {
	if err := sess.Begin(); err != nil {
		return false, err
	}
	doc, err := coll.Get(sess, pk)
	if err == nil && !expiredAt(bson.Raw(doc), path, cutoff) {
		err = wt.ErrNotFound
	}
	if err == nil {
		err = coll.Delete(sess, pk, bson.Raw(doc))
	}
	if err != nil {
		sess.Rollback()
		if err == wt.ErrNotFound {
			return false, nil
		}
		return false, err
	}
	return true, sess.Commit(false)
}

// expiredAt reports whether doc's date at path (the earliest date of an
// array, as mongod's TTL monitor takes it) is at or before cutoff.
func expiredAt(doc bson.Raw, path string, cutoff int64) bool {
	v, ok := query.Lookup(doc, path)
	if !ok {
		return false
	}
	if ms, ok := v.DateTimeOK(); ok {
		return ms <= cutoff
	}
	if v.Type != bsoncore.TypeArray {
		return false
	}
	vals, _ := v.Array().Values()
	earliest, found := int64(math.MaxInt64), false
	for _, el := range vals {
		if ms, ok := el.DateTimeOK(); ok {
			earliest, found = min(earliest, ms), true
		}
	}
	return found && earliest <= cutoff
}

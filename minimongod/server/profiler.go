package server

import (
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mlog"
	"wtd/minimongod/mongoerr"
)

// profileCapBytes is the size of each database's system.profile, mongod's
// default for the capped collection (1 MB).
const profileCapBytes = 1 << 20

// profiler is the database profiler and the slow query log: per-database
// levels (0 off, 1 slow operations, 2 all), the slowms threshold and the
// sample rate, and each database's system.profile, kept as a capped ring
// of the newest entries in memory.
type profiler struct {
	mu         sync.Mutex
	defLevel   int
	levels     map[string]int
	slowMS     int64
	sampleRate float64
	rings      map[string]*profileRing

	// off (every level 0) and slowMS again, for observe to skip the lock
	// for the commonest command: unprofiled and quick. Set under mu.
	off        atomic.Bool
	slowMSSeen atomic.Int64
}

// published copies what observe reads without the lock; p.mu is held.
func (p *profiler) published() {
	off := p.defLevel == 0
	for _, l := range p.levels {
		off = off && l == 0
	}
	p.off.Store(off)
	p.slowMSSeen.Store(p.slowMS)
}

// profileRing is a database's system.profile: entries oldest first, at
// most profileCapBytes in all.
type profileRing struct {
	docs  [][]byte
	bytes int
}

func (r *profileRing) add(doc []byte) {
	r.docs = append(r.docs, doc)
	r.bytes += len(doc)
	for r.bytes > profileCapBytes && len(r.docs) > 1 {
		r.bytes -= len(r.docs[0])
		r.docs[0] = nil
		r.docs = r.docs[1:]
	}
}

func (p *profiler) init(level, slowMS int, sampleRate float64) {
	p.defLevel, p.slowMS, p.sampleRate = level, int64(slowMS), sampleRate
	p.levels, p.rings = map[string]int{}, map[string]*profileRing{}
	p.published()
}

func (p *profiler) level(db string) int {
	if l, ok := p.levels[db]; ok {
		return l
	}
	return p.defLevel
}

// entries returns a copy of db's system.profile entries, oldest first.
func (p *profiler) entries(db string) [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rings[db]
	if r == nil {
		return nil
	}
	return append([][]byte(nil), r.docs...)
}

// cmdProfile is {profile: level, slowms, sampleRate}: it sets the
// database's level (-1 only reads) and the global threshold and rate, and
// answers with the settings as they were.
func cmdProfile(c *clientConn, req *request, dst []byte) ([]byte, error) {
	lv := req.body.Index(0).Value()
	level, ok := lv.AsInt64OK()
	if f, fok := lv.AsFloat64OK(); fok && !ok {
		level, ok = int64(f), f == float64(int64(f))
	}
	if !ok || level < -1 || level > 2 {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "Invalid profiling level: %s", lv.String())
	}
	var slowMS *int64
	if v, err := req.lookupErr("slowms"); err == nil {
		n, ok := v.AsInt64OK()
		if !ok {
			return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field 'profile.slowms' is the wrong type '%s', expected types '[long, int, decimal, double]'", typeName(v.Type))
		}
		slowMS = &n
	}
	var rate *float64
	if v, err := req.lookupErr("sampleRate"); err == nil {
		f, ok := v.AsFloat64OK()
		if !ok || f < 0 || f > 1 {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive")
		}
		rate = &f
	}
	p := &c.s.profiler
	p.mu.Lock()
	was, oldSlow, oldRate := p.level(req.db), p.slowMS, p.sampleRate
	if level >= 0 {
		p.levels[req.db] = int(level)
	}
	if slowMS != nil {
		p.slowMS = *slowMS
	}
	if rate != nil {
		p.sampleRate = *rate
	}
	p.published()
	p.mu.Unlock()
	d := bsoncore.AppendInt32Element(dst, "was", int32(was))
	d = bsoncore.AppendInt32Element(d, "slowms", int32(oldSlow))
	return bsoncore.AppendDoubleElement(d, "sampleRate", oldRate), nil
}

// observe profiles and logs a finished command as mongod does: every
// operation at level 2, those at or over slowms at level 1, and the slow
// ones in the log at any level, each sampled at sampleRate.
func (c *clientConn) observe(req *request, op *operation, dur time.Duration, replyLen int, failed error) {
	if op == nil || req.name == "profile" {
		return
	}
	p := &c.s.profiler
	if p.off.Load() && dur.Milliseconds() < p.slowMSSeen.Load() {
		return // what the locked path below decides too
	}
	p.mu.Lock()
	level, slowMS, rate := p.level(req.db), p.slowMS, p.sampleRate
	p.mu.Unlock()
	slow := dur.Milliseconds() >= slowMS
	if !slow && level < 2 {
		return
	}
	if rate < 1 && rand.Float64() >= rate {
		return
	}
	if slow {
		c.logSlow(req, op, dur, replyLen, failed)
	}
	if level == 2 || (level == 1 && slow) {
		doc := profileEntry(req, op, c.remote, dur, replyLen, failed)
		p.mu.Lock()
		r := p.rings[req.db]
		if r == nil {
			r = &profileRing{}
			p.rings[req.db] = r
		}
		r.add(doc)
		p.mu.Unlock()
	}
}

// logSlow writes mongod's "Slow query" line.
func (c *clientConn) logSlow(req *request, op *operation, dur time.Duration, replyLen int, failed error) {
	var cmd bson.D
	bson.Unmarshal(req.body, &cmd)
	attrs := []mlog.Attr{mlog.A("type", "command"), mlog.A("ns", op.ns), mlog.A("command", cmd)}
	if op.planSummary != "" {
		attrs = append(attrs, mlog.A("planSummary", op.planSummary), mlog.A("keysExamined", op.keysExamined),
			mlog.A("docsExamined", op.docsExamined))
	}
	attrs = append(attrs, mlog.A("nreturned", op.nreturned), mlog.A("numYields", 0), mlog.A("reslen", replyLen))
	if failed != nil {
		attrs = append(attrs, mlog.A("ok", 0), mlog.A("errMsg", failed.Error()))
	}
	attrs = append(attrs, mlog.A("protocol", "op_msg"), mlog.A("durationMillis", dur.Milliseconds()))
	c.s.log.Info("COMMAND", 51803, c.ctxName(), "Slow query", attrs...)
}

// profileEntry is a system.profile document, with mongod's fields.
func profileEntry(req *request, op *operation, client string, dur time.Duration, replyLen int, failed error) []byte {
	d := bsoncore.AppendStringElement(nil, "op", op.opType)
	d = bsoncore.AppendStringElement(d, "ns", op.ns)
	d = appendOpCommand(d, req.body)
	if op.planSummary != "" {
		d = bsoncore.AppendInt64Element(d, "keysExamined", op.keysExamined)
		d = bsoncore.AppendInt64Element(d, "docsExamined", op.docsExamined)
	}
	d = bsoncore.AppendInt64Element(d, "nreturned", op.nreturned)
	d = bsoncore.AppendInt32Element(d, "numYield", 0)
	d = bsoncore.AppendInt32Element(d, "responseLength", int32(replyLen))
	d = bsoncore.AppendStringElement(d, "protocol", "op_msg")
	d = bsoncore.AppendInt64Element(d, "millis", dur.Milliseconds())
	if op.planSummary != "" {
		d = bsoncore.AppendStringElement(d, "planSummary", op.planSummary)
	}
	if failed != nil {
		d = bsoncore.AppendDoubleElement(d, "ok", 0)
		d = bsoncore.AppendStringElement(d, "errMsg", failed.Error())
	}
	d = appendDate(d, "ts", time.Now())
	d = bsoncore.AppendStringElement(d, "client", hostOf(client))
	d = bsoncore.AppendStringElement(d, "user", "")
	return bsoncore.BuildDocument(nil, d)
}

// hostOf returns the host part of "host:port".
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

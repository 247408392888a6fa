package server

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/query"
	"wtd/minimongod/storage"
)

// summary is mongod's planSummary: the plan's leaf stage, "IXSCAN { a: 1 }",
// "COLLSCAN" or "IDHACK".
func (p plan) summary() string {
	switch {
	case p.idHack:
		return "IDHACK"
	case p.index == "_id_":
		return "IXSCAN { _id: 1 }"
	case p.ix != nil:
		return "IXSCAN " + storage.ShellString(p.ix.KeyPattern())
	}
	return "COLLSCAN"
}

// direction is explain's scan direction.
func (p plan) direction() string {
	if p.desc {
		return "backward"
	}
	return "forward"
}

// stageStats are one execution's counts, for executionStats.
type stageStats struct {
	matched, returned, keys, docs, millis int64
	sortBytes                             int64
	exec                                  bool // executionStats wanted
}

// queryShape is what explain plans: a filter with its sort, skip, limit
// and outer stage (COUNT, UPDATE, DELETE; none for find).
type queryShape struct {
	filter      bson.Raw
	srt         *query.Sort
	sortSpec    bson.Raw
	skip, limit int64
	outer       string
}

// appendWinningPlan appends the plan as explain's stage tree, with the
// execution counts when st.exec.
func appendWinningPlan(dst []byte, key string, p plan, shape queryShape, st stageStats, collExists bool) []byte {
	stage := func(d []byte, name string, nReturned int64) []byte {
		d = bsoncore.AppendStringElement(d, "stage", name)
		if st.exec {
			d = bsoncore.AppendInt32Element(d, "nReturned", int32(nReturned))
			d = bsoncore.AppendInt32Element(d, "executionTimeMillisEstimate", int32(st.millis))
		}
		return d
	}
	var wrappers []func(d []byte) []byte // outermost first
	if shape.outer != "" {
		wrappers = append(wrappers, func(d []byte) []byte { return stage(d, shape.outer, 0) })
	}
	if shape.limit > 0 {
		wrappers = append(wrappers, func(d []byte) []byte {
			return bsoncore.AppendInt64Element(stage(d, "LIMIT", st.returned), "limitAmount", shape.limit)
		})
	}
	if shape.skip > 0 {
		wrappers = append(wrappers, func(d []byte) []byte {
			return bsoncore.AppendInt64Element(stage(d, "SKIP", max(st.matched-shape.skip, 0)), "skipAmount", shape.skip)
		})
	}
	if shape.srt != nil && !p.sorted {
		wrappers = append(wrappers, func(d []byte) []byte {
			d = stage(d, "SORT", st.matched)
			d = bsoncore.AppendDocumentElement(d, "sortPattern", shape.sortSpec)
			d = bsoncore.AppendInt64Element(d, "memLimit", 100*1024*1024)
			if st.exec {
				d = bsoncore.AppendInt64Element(d, "totalDataSizeSorted", st.sortBytes)
			}
			return bsoncore.AppendStringElement(d, "type", "simple")
		})
	}
	leaf := func(d []byte) []byte {
		switch {
		case !collExists:
			return stage(d, "EOF", 0)
		case p.idHack:
			d = stage(d, "IDHACK", st.matched)
			if st.exec {
				d = bsoncore.AppendInt32Element(d, "keysExamined", int32(st.keys))
				d = bsoncore.AppendInt32Element(d, "docsExamined", int32(st.docs))
			}
			return d
		case p.index != "":
			d = stage(d, "FETCH", st.matched)
			if f := residualFilter(shape.filter, p); f != nil {
				d = bsoncore.AppendDocumentElement(d, "filter", f)
			}
			if st.exec {
				d = bsoncore.AppendInt32Element(d, "docsExamined", int32(st.docs))
			}
			idx, dd := bsoncore.AppendDocumentElementStart(d, "inputStage")
			dd = appendIXScan(stage(dd, "IXSCAN", st.keys), p, st)
			d, _ = bsoncore.AppendDocumentEnd(dd, idx)
			return d
		}
		d = stage(d, "COLLSCAN", st.matched)
		if len(shape.filter) > 5 {
			d = bsoncore.AppendDocumentElement(d, "filter", shape.filter)
		}
		d = bsoncore.AppendStringElement(d, "direction", p.direction())
		if st.exec {
			d = bsoncore.AppendInt32Element(d, "docsExamined", int32(st.docs))
		}
		return d
	}
	idx, d := bsoncore.AppendDocumentElementStart(dst, key)
	var ends []int32
	for _, w := range wrappers {
		d = w(d)
		var i int32
		i, d = bsoncore.AppendDocumentElementStart(d, "inputStage")
		ends = append(ends, i)
	}
	d = leaf(d)
	for i := len(ends) - 1; i >= 0; i-- {
		d, _ = bsoncore.AppendDocumentEnd(d, ends[i])
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// appendIXScan appends an IXSCAN stage's fields.
func appendIXScan(d []byte, p plan, st stageStats) []byte {
	pattern := bson.Raw(bsoncore.NewDocumentBuilder().AppendInt32("_id", 1).Build())
	multikey, unique := false, true
	if p.ix != nil {
		pattern, multikey, unique = p.ix.KeyPattern(), p.ix.Multikey(), p.ix.Unique
	}
	d = bsoncore.AppendDocumentElement(d, "keyPattern", pattern)
	d = bsoncore.AppendStringElement(d, "indexName", p.index)
	d = bsoncore.AppendBooleanElement(d, "isMultiKey", multikey)
	d = bsoncore.AppendBooleanElement(d, "isUnique", unique)
	d = bsoncore.AppendInt32Element(d, "indexVersion", 2)
	d = bsoncore.AppendStringElement(d, "direction", p.direction())
	bi, d := bsoncore.AppendDocumentElementStart(d, "indexBounds")
	elems, _ := bsoncore.Document(pattern).Elements()
	for i, el := range elems {
		ai, dd := bsoncore.AppendArrayElementStart(d, el.Key())
		bounds := []interval{{lo: "MinKey", hi: "MaxKey", loIncl: true, hiIncl: true}}
		if i == 0 && p.pred != nil {
			bounds = predicateIntervals(*p.pred, multikey)
		}
		if p.desc {
			bounds = reverseIntervals(bounds)
		}
		for j, b := range bounds {
			dd = bsoncore.AppendStringElement(dd, itoa(j), b.String())
		}
		d, _ = bsoncore.AppendArrayEnd(dd, ai)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, bi)
	if st.exec {
		d = bsoncore.AppendInt32Element(d, "keysExamined", int32(st.keys))
	}
	return d
}

// interval is one index bound as explain shows it, from lo to hi in scan
// order.
type interval struct {
	lo, hi         string
	loIncl, hiIncl bool
}

// String is the bound as explain renders it: "[1, 1]", "(3, MaxKey]".
func (iv interval) String() string {
	open, close := "(", ")"
	if iv.loIncl {
		open = "["
	}
	if iv.hiIncl {
		close = "]"
	}
	return open + iv.lo + ", " + iv.hi + close
}

// reverseIntervals is bounds as a backward scan meets them, as mongod's
// explain shows it: last first, each from its high end, "[MaxKey, MinKey]".
func reverseIntervals(bounds []interval) []interval {
	out := make([]interval, len(bounds))
	for i, b := range bounds {
		out[len(bounds)-1-i] = interval{lo: b.hi, hi: b.lo, loIncl: b.hiIncl, hiIncl: b.loIncl}
	}
	return out
}

// predicateIntervals are a predicate's index bounds in ascending order. On
// a multikey index only the lower side of a two-sided range bounds the
// scan (predicateRanges).
func predicateIntervals(p query.Predicate, multikey bool) []interval {
	switch {
	case p.Eq != nil:
		v := storage.ValueString(*p.Eq)
		return []interval{{lo: v, hi: v, loIncl: true, hiIncl: true}}
	case p.In != nil:
		out := make([]interval, 0, len(p.In))
		for _, v := range p.In {
			s := storage.ValueString(v)
			out = append(out, interval{lo: s, hi: s, loIncl: true, hiIncl: true})
		}
		return out
	}
	iv := interval{lo: "MinKey", hi: "MaxKey", loIncl: true, hiIncl: true}
	if p.Lower.Type != 0 {
		iv.lo, iv.loIncl = storage.ValueString(p.Lower), p.LowerInclusive
	}
	if p.Upper.Type != 0 && (!multikey || p.Lower.Type == 0) {
		iv.hi, iv.hiIncl = storage.ValueString(p.Upper), p.UpperInclusive
	}
	return []interval{iv}
}

// residualFilter is the filter a FETCH still applies after an index scan:
// nil when the filter is only the indexed field's condition.
func residualFilter(filter bson.Raw, p plan) bson.Raw {
	elems, _ := bsoncore.Document(filter).Elements()
	path := "_id"
	if p.ix != nil {
		path = p.ix.Fields[0].Path
	}
	if len(elems) == 0 || (len(elems) == 1 && elems[0].Key() == path && p.pred != nil && !strings.HasPrefix(path, "$")) {
		return nil
	}
	return filter
}

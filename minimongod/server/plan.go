package server

import (
	"bytes"
	"sort"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
)

// plan is how a query reads a collection: which table or index, over which
// key ranges, and whether the scan already yields the requested sort order.
type plan struct {
	scan   *storage.Scan
	index  string // "_id_", an index name, or "" for a collection scan
	sorted bool   // scan order satisfies the sort
	dedupe bool   // an index scan that may see a document twice (multikey)
	// point is the table key of an _id equality: one lookup, no scan.
	point  []byte
	idHack bool // planned as an _id point lookup
	// ix is the secondary index scanned (nil for _id or a collection
	// scan), pred the predicate its bounds come from (nil: all keys) and
	// desc the scan direction; explain shows them.
	ix   *storage.Index
	pred *query.Predicate
	desc bool
}

// planQuery picks the access path for matcher (and sort, may be nil) on c:
// an _id point or range, an index with an equality, $in or range predicate,
// an index in sort order, or a collection scan. Only a sort on the one
// field a scan goes in order of is already satisfied; any other sort,
// one on several fields included, is done in memory.
func planQuery(c *storage.Collection, m *query.Matcher, srt *query.Sort) plan {
	var sortField *query.SortField
	if srt != nil {
		if f := srt.Fields(); len(f) == 1 {
			sortField = &f[0]
		}
	}
	if id, ok := m.IDEquality(); ok {
		k := keyenc.Append(make([]byte, 0, 32), id)
		r := storage.Range{Lo: storage.Bound{Key: k, Inclusive: true}, Hi: storage.Bound{Key: k, Inclusive: true}}
		return plan{scan: storage.NewScan(c, nil, []storage.Range{r}, false), index: "_id_", sorted: true, point: k, idHack: true}
	}
	preds := m.Predicates()
	// Prefer equality / $in, then ranges; _id before secondary indexes.
	for _, wantRange := range []bool{false, true} {
		for _, p := range preds {
			if p.IsRange() != wantRange {
				continue
			}
			if p.Path == "_id" {
				ranges := predicateRanges(p, false)
				desc := sortField != nil && sortField.Path == "_id" && sortField.Desc
				sorted := srt == nil || (sortField != nil && sortField.Path == "_id")
				return plan{scan: storage.NewScan(c, nil, ranges, desc), index: "_id_", sorted: sorted, pred: &p, desc: desc}
			}
			if ix := leadingIndex(c, p.Path); ix != nil {
				ranges := predicateRanges(p, ix.Multikey())
				sorted := srt == nil || (sortField != nil && sortField.Path == p.Path && len(ix.Fields) == 1)
				desc := sortField != nil && sortField.Path == p.Path && sortField.Desc
				return plan{scan: storage.NewScan(c, ix, ranges, desc), index: ix.Name, sorted: sorted, dedupe: true, ix: ix, pred: &p, desc: desc}
			}
		}
	}
	if sortField != nil {
		if sortField.Path == "_id" {
			return plan{scan: storage.NewScan(c, nil, nil, sortField.Desc), index: "_id_", sorted: true, desc: sortField.Desc}
		}
		if ix := leadingIndex(c, sortField.Path); ix != nil && len(ix.Fields) == 1 {
			return plan{scan: storage.NewScan(c, ix, nil, sortField.Desc), index: ix.Name, sorted: true, dedupe: true, ix: ix, desc: sortField.Desc}
		}
	}
	return plan{scan: storage.NewScan(c, nil, nil, false), sorted: srt == nil}
}

// leadingIndex returns an index whose first field is path.
func leadingIndex(c *storage.Collection, path string) *storage.Index {
	for _, ix := range c.Indexes() {
		if ix.Fields[0].Path == path {
			return ix
		}
	}
	return nil
}

// predicateRanges turns a predicate into sorted key ranges. On a multikey
// index only one side of a two-sided range is a sound bound.
func predicateRanges(p query.Predicate, multikey bool) []storage.Range {
	switch {
	case p.Eq != nil:
		k := keyenc.Append(nil, *p.Eq)
		return []storage.Range{{Lo: storage.Bound{Key: k, Inclusive: true}, Hi: storage.Bound{Key: k, Inclusive: true}}}
	case p.In != nil:
		keys := make([][]byte, 0, len(p.In))
		for _, v := range p.In {
			keys = append(keys, keyenc.Append(nil, v))
		}
		sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
		var out []storage.Range
		for i, k := range keys {
			if i > 0 && bytes.Equal(k, keys[i-1]) {
				continue
			}
			out = append(out, storage.Range{Lo: storage.Bound{Key: k, Inclusive: true}, Hi: storage.Bound{Key: k, Inclusive: true}})
		}
		return out
	}
	var r storage.Range
	if p.Lower.Type != 0 {
		r.Lo = storage.Bound{Key: keyenc.Append(nil, p.Lower), Inclusive: p.LowerInclusive}
	}
	if p.Upper.Type != 0 && (!multikey || p.Lower.Type == 0) {
		r.Hi = storage.Bound{Key: keyenc.Append(nil, p.Upper), Inclusive: p.UpperInclusive}
	}
	return []storage.Range{r}
}

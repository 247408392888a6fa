package server

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
)

// queryHint is a query's hint: $natural (a collection scan), the _id
// index, or a secondary index.
type queryHint struct {
	natural bool
	desc    bool           // $natural: -1
	index   *storage.Index // nil with natural or for _id
}

// hintArg reads the command's hint (an index name or key pattern, or
// {$natural: ±1}); nil when absent or empty. A hint naming no index of
// coll is BadValue, as in mongod.
func hintArg(req *request, coll *storage.Collection) (*queryHint, error) {
	v, err := req.lookupErr("hint")
	if err != nil || coll == nil {
		return nil, nil
	}
	switch v.Type {
	case bsoncore.TypeString:
		if v.StringValue() == "" {
			return nil, nil
		}
		if v.StringValue() == "_id_" {
			return &queryHint{}, nil
		}
		if ix := coll.Index(v.StringValue()); ix != nil {
			return &queryHint{index: ix}, nil
		}
	case bsoncore.TypeEmbeddedDocument:
		key := v.Document()
		elems, _ := key.Elements()
		if len(elems) == 0 {
			return nil, nil
		}
		if elems[0].Key() == "$natural" {
			f, _ := elems[0].Value().AsFloat64OK()
			return &queryHint{natural: true, desc: f < 0}, nil
		}
		if len(elems) == 1 && elems[0].Key() == "_id" {
			return &queryHint{}, nil
		}
		for _, ix := range coll.Indexes() {
			if bytes.Equal(ix.KeyPattern(), key) {
				return &queryHint{index: ix}, nil
			}
		}
	default:
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "hint must be a string or an object")
	}
	return nil, mongoerr.New(mongoerr.CodeBadValue, "hint provided does not correspond to an existing index")
}

// planHinted plans a query on the index h names: over the key ranges of
// a predicate on its leading field, else over the whole index.
func planHinted(c *storage.Collection, h *queryHint, m *query.Matcher, srt *query.Sort) plan {
	if h.natural {
		return plan{scan: storage.NewScan(c, nil, nil, h.desc), sorted: srt == nil, desc: h.desc}
	}
	path := "_id"
	if h.index != nil {
		path = h.index.Fields[0].Path
	}
	var sortField *query.SortField
	if srt != nil {
		if f := srt.Fields(); len(f) == 1 {
			sortField = &f[0]
		}
	}
	desc := sortField != nil && sortField.Path == path && sortField.Desc
	sorted := srt == nil || (sortField != nil && sortField.Path == path && (h.index == nil || len(h.index.Fields) == 1))
	var ranges []storage.Range
	var pred *query.Predicate
	for _, p := range m.Predicates() {
		if p.Path == path {
			ranges = predicateRanges(p, h.index != nil && h.index.Multikey())
			pred = &p
			break
		}
	}
	if h.index == nil {
		return plan{scan: storage.NewScan(c, nil, ranges, desc), index: "_id_", sorted: sorted, pred: pred, desc: desc}
	}
	return plan{scan: storage.NewScan(c, h.index, ranges, desc), index: h.index.Name, sorted: sorted, dedupe: true, ix: h.index, pred: pred, desc: desc}
}

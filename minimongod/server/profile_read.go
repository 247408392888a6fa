package server

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/query"
)

// profileMatches returns db's system.profile entries that match m, in
// natural (insertion) order or sorted by srt, after skip and limit.
func (c *clientConn) profileMatches(db string, m *query.Matcher, srt *query.Sort, skip, limit int64) [][]byte {
	var docs [][]byte
	for _, d := range c.s.profiler.entries(db) {
		if m.Match(bson.Raw(d)) {
			docs = append(docs, d)
		}
	}
	if srt != nil {
		sortDocs(docs, srt)
	}
	docs = docs[min(int64(len(docs)), max(skip, 0)):]
	if limit > 0 && int64(len(docs)) > limit {
		docs = docs[:limit]
	}
	return docs
}

// memoryCursor is a cursor over documents held in memory (an aggregation's
// result, system.profile).
func (c *clientConn) memoryCursor(ns string, docs [][]byte, proj *query.Projection) *serverCursor {
	ex := &executor{s: c.s, didSort: true, sorted: docs, limit: -1}
	return &serverCursor{ns: ns, ex: ex, proj: proj}
}

package storage

import (
	"strings"

	"wtd/minimongod/wt"
)

// dropOrphans drops collection and index tables that the catalog does not
// name: the leftovers of a catalog change a crash interrupted (a table
// created before its catalog entry was committed, or one whose entry was
// removed before the table was dropped).
func (e *Engine) dropOrphans() error {
	known := map[string]bool{}
	for _, c := range e.coll {
		known[c.URI()] = true
		for _, ix := range c.indexes {
			known[ix.URI()] = true
		}
	}
	cur, err := e.meta.OpenCursor("metadata:", "")
	if err != nil {
		return err
	}
	var orphans []string
	for cur.Next() == nil {
		uri, err := cur.StringKey()
		if err != nil {
			cur.Close()
			return err
		}
		ident, ok := strings.CutPrefix(uri, "table:")
		if ok && (strings.HasPrefix(ident, "collection-") || strings.HasPrefix(ident, "index-")) && !known[uri] {
			orphans = append(orphans, uri)
		}
	}
	cur.Close()
	for _, uri := range orphans {
		if err := e.dropTable(uri); err != nil && err != wt.ErrNotFound {
			return err
		}
	}
	return nil
}

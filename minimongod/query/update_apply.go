package query

import (
	"bytes"
	"strings"
	"time"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// applyCtx carries per-document state while applying an update.
type applyCtx struct {
	doc     []byte           // the original document
	renamed []bsoncore.Value // $rename source values (Type 0: missing)
	now     time.Time
	level   int // the level of the elements being written, top-level ones 1
}

// idText renders the document's _id as mongod does in messages: {_id: 1}.
func (c *applyCtx) idText() string {
	id, ok := lookupField(c.doc, "_id")
	if !ok {
		return "{}"
	}
	return "{" + formatElem("_id", id) + "}"
}

// Apply applies the update to doc, returning the new document and whether
// it differs from doc. $setOnInsert is ignored.
func (u *Update) Apply(doc bson.Raw) (out bson.Raw, changed bool, err error) {
	if u.isRepl {
		id, ok := lookupField(doc, "_id")
		if out, err = replaceWithID(u.replacement, id, ok); err == nil {
			err = checkStorageDepth(out)
		}
	} else {
		out, err = u.applyTree(doc, u.tree)
	}
	if err != nil {
		return nil, false, err
	}
	return out, !bytes.Equal(out, doc), nil
}

// UpsertBase returns the document an upsert inserts when nothing matches
// filter: the filter's equality fields (dotted paths as nested documents,
// _id first) with the modifiers and $setOnInsert applied, or for a
// replacement the replacement plus the filter's _id equality.
func (u *Update) UpsertBase(filter bson.Raw) (bson.Raw, error) {
	base, err := equalityDoc(filter)
	if err != nil {
		return nil, err
	}
	if u.isRepl {
		id, ok := lookupField(base, "_id")
		out, err := replaceWithID(u.replacement, id, ok)
		if err != nil {
			return nil, err
		}
		return out, checkStorageDepth(out)
	}
	out, err := u.applyTree(base, u.upsertTree)
	if err != nil {
		return nil, err
	}
	return moveIDFirst(out), nil
}

// applyTree applies an op tree to doc and enforces _id immutability.
func (u *Update) applyTree(doc []byte, tree *updNode) (bson.Raw, error) {
	ctx := &applyCtx{doc: doc, renamed: make([]bsoncore.Value, len(u.renames))}
	for i, r := range u.renames {
		if v, ok := Lookup(doc, r.from); ok {
			ctx.renamed[i] = v
		}
	}
	out, err := applyDoc(nil, doc, tree, ctx)
	if err != nil {
		return nil, err
	}
	if _, touched := tree.index["_id"]; touched {
		old, had := lookupField(doc, "_id")
		now, has := lookupField(out, "_id")
		if had && (!has || !sameValue(old, now)) {
			return nil, mongoerr.New(mongoerr.CodeImmutableField,
				"Performing an update on the path '_id' would modify the immutable field '_id'")
		}
	}
	return out, nil
}

// errTooDeep is mongod's refusal of an update whose result nests deeper
// than a stored document may (storage_validation::storageValid).
var errTooDeep = mongoerr.New(mongoerr.CodeOverflow, "Document exceeds maximum nesting depth of %d", mongoerr.MaxStorageDepth)

// checkStorageDepth refuses a whole new document (a replacement) nesting
// deeper than mongoerr.MaxStorageDepth.
func checkStorageDepth(doc []byte) error {
	if rawbson.Nesting(bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc}, mongoerr.MaxStorageDepth) > mongoerr.MaxStorageDepth {
		return errTooDeep
	}
	return nil
}

// checkWrittenDepth refuses value v written at level (top-level fields
// are at level 1) when it puts elements deeper than
// mongoerr.MaxStorageDepth, as mongod checks each element an update changes.
func checkWrittenDepth(level int, v bsoncore.Value) error {
	room := mongoerr.MaxStorageDepth - level
	// A level of nesting takes at least 7 bytes: most values need no walk.
	if room < 0 || len(v.Data)/7 > room && rawbson.Nesting(v, room) > room {
		return errTooDeep
	}
	return nil
}

// sameValue reports whether two values are bytewise identical.
func sameValue(a, b bsoncore.Value) bool {
	return a.Type == b.Type && bytes.Equal(a.Data, b.Data)
}

// replaceWithID builds a replacement keeping the original _id first.
func replaceWithID(repl []byte, id bsoncore.Value, hasID bool) (bson.Raw, error) {
	rid, rHas := lookupField(repl, "_id")
	if !hasID {
		return moveIDFirst(bytes.Clone(repl)), nil
	}
	if rHas && !sameValue(rid, id) {
		return nil, mongoerr.New(mongoerr.CodeImmutableField,
			"After applying the update, the (immutable) field '_id' was found to have been altered to %s",
			formatElem("_id", rid))
	}
	idx, dst := bsoncore.AppendDocumentStart(make([]byte, 0, len(repl)+len(id.Data)+8))
	dst = appendElem(dst, "_id", id)
	dst = appendAllBut(dst, repl, "_id")
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst, nil
}

// appendAllBut appends every element of doc except those named skip.
func appendAllBut(dst, doc []byte, skip string) []byte {
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return dst
		}
		if string(k) != skip {
			dst = appendElem(dst, k, v)
		}
	}
}

// moveIDFirst returns doc with its _id field (if any) moved to the front.
func moveIDFirst(doc []byte) bson.Raw {
	id, ok := lookupField(doc, "_id")
	if !ok {
		return doc
	}
	it := rawbson.NewIter(doc)
	if k, _, _ := it.Next(); string(k) == "_id" {
		return doc
	}
	idx, dst := bsoncore.AppendDocumentStart(make([]byte, 0, len(doc)))
	dst = appendElem(dst, "_id", id)
	dst = appendAllBut(dst, doc, "_id")
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// applyDoc appends doc with the subtree n applied; new fields follow the
// existing ones in n's order.
func applyDoc(dst, doc []byte, n *updNode, ctx *applyCtx) ([]byte, error) {
	ctx.level++
	defer func() { ctx.level-- }()
	idx, dst := bsoncore.AppendDocumentStart(dst)
	seen := make([]bool, len(n.kids))
	it := rawbson.NewIter(doc)
	var err error
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		i, hit := n.index[string(k)]
		if !hit || seen[i] {
			dst = appendElem(dst, k, v)
			continue
		}
		seen[i] = true
		if dst, err = applyChild(dst, string(k), v, true, n.kids[i], ctx, false); err != nil {
			return nil, err
		}
	}
	for i, c := range n.kids {
		if !seen[i] {
			if dst, err = applyChild(dst, n.names[i], bsoncore.Value{}, false, c, ctx, false); err != nil {
				return nil, err
			}
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst, nil
}

// applyChild appends field key after applying subtree c to its current
// value cur (present reports whether the field exists).
func applyChild(dst []byte, key string, cur bsoncore.Value, present bool, c *updNode, ctx *applyCtx, inArray bool) ([]byte, error) {
	if c.op != nil {
		nv, keep, err := c.op.apply(cur, present, ctx)
		if err == nil && keep && (!present || !sameValue(cur, nv)) {
			err = checkWrittenDepth(ctx.level, nv)
		}
		switch {
		case err != nil:
			return nil, err
		case keep:
			dst = appendElem(dst, key, nv)
		case inArray && present:
			dst = appendElem(dst, key, nullVal)
		}
		return dst, nil
	}
	switch {
	case !present:
		return createChild(dst, key, c, ctx)
	case cur.Type == bsoncore.TypeEmbeddedDocument:
		dst = appendHeader(dst, cur.Type, key)
		return applyDoc(dst, cur.Data, c, ctx)
	case cur.Type == bsoncore.TypeArray:
		return applyArray(dst, key, cur, c, ctx)
	case c.creates:
		return nil, notViable(key, cur, c)
	}
	return appendElem(dst, key, cur), nil
}

// createChild creates a missing intermediate document, omitting it when
// nothing ends up inside.
func createChild(dst []byte, key string, c *updNode, ctx *applyCtx) ([]byte, error) {
	if !c.creates {
		return dst, nil
	}
	start := len(dst)
	dst = appendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
	mark := len(dst)
	dst, err := applyDoc(dst, emptyDoc(bsoncore.TypeEmbeddedDocument).Data, c, ctx)
	if err != nil {
		return nil, err
	}
	if len(dst)-mark == 5 {
		dst = dst[:start]
	}
	return dst, nil
}

// notViable is mongod's PathNotViable error for creating a field under a
// non-container value.
func notViable(key string, cur bsoncore.Value, c *updNode) error {
	field := ""
	for i, k := range c.kids {
		if k.creates {
			field = c.names[i]
			break
		}
	}
	return mongoerr.New(mongoerr.CodePathNotViable,
		"Cannot create field '%s' in element {%s}", field, formatElem(key, cur))
}

// applyArray appends array cur with subtree c applied by index; indexes
// past the end are padded with nulls.
func applyArray(dst []byte, key string, cur bsoncore.Value, c *updNode, ctx *applyCtx) ([]byte, error) {
	for i, name := range c.names {
		if _, ok := arrayIdx(name); !ok && c.kids[i].creates {
			return nil, mongoerr.New(mongoerr.CodePathNotViable,
				"Cannot create field '%s' in element {%s}", name, formatElem(key, cur))
		}
	}
	ctx.level++
	defer func() { ctx.level-- }()
	dst = appendHeader(dst, bsoncore.TypeArray, key)
	idx, dst := bsoncore.AppendArrayStart(dst)
	seen := make([]bool, len(c.kids))
	n := 0
	it := rawbson.NewIter(cur.Data)
	var err error
	for ; ; n++ {
		_, v, ok := it.Next()
		if !ok {
			break
		}
		k := indexKey(n)
		i, hit := c.index[k]
		if !hit {
			dst = appendElem(dst, k, v)
			continue
		}
		seen[i] = true
		if dst, err = applyChild(dst, k, v, true, c.kids[i], ctx, true); err != nil {
			return nil, err
		}
	}
	if dst, err = extendArray(dst, n, c, seen, ctx); err != nil {
		return nil, err
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return dst, nil
}

// MaxArrayPadding is how many nulls an update may add to reach an array
// index past the end, as mongod's (pathsupport::kMaxPaddingAllowed).
const MaxArrayPadding = 1500000

// extendArray applies the creating ops whose indexes lie past the end.
func extendArray(dst []byte, n int, c *updNode, seen []bool, ctx *applyCtx) ([]byte, error) {
	var err error
	for i, name := range c.names {
		pos, ok := arrayIdx(name)
		if !ok || seen[i] || !c.kids[i].creates || pos < n {
			continue
		}
		if pos-n > MaxArrayPadding {
			return nil, mongoerr.New(mongoerr.CodeCannotBackfillArray, "can't backfill more than %d elements", MaxArrayPadding)
		}
		for ; n < pos; n++ {
			dst = appendElem(dst, indexKey(n), nullVal)
		}
		if dst, err = applyChild(dst, name, bsoncore.Value{}, false, c.kids[i], ctx, true); err != nil {
			return nil, err
		}
		n++
	}
	return dst, nil
}

// equalityDoc builds the document implied by a filter's equalities.
func equalityDoc(filter []byte) ([]byte, error) {
	var ops []*updateOp
	collectEqualities(filter, &ops, 0)
	tree := newUpdNode()
	for _, op := range ops {
		if err := tree.insert(op); err != nil {
			return nil, mongoerr.New(codeNotSingleValueField,
				"cannot infer query fields to set, path '%s' is matched twice", err.(conflict).at)
		}
	}
	ctx := &applyCtx{doc: emptyDoc(bsoncore.TypeEmbeddedDocument).Data}
	out, err := applyDoc(nil, ctx.doc, tree, ctx)
	if err != nil {
		return nil, err
	}
	return moveIDFirst(out), nil
}

// collectEqualities gathers {path: v} and {path: {$eq: v}} conditions,
// including those inside top-level $and.
func collectEqualities(doc []byte, ops *[]*updateOp, depth int) {
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		key := string(k)
		switch {
		case key == "$and" && v.Type == bsoncore.TypeArray && depth < maxFilterDepth:
			ai := rawbson.NewIter(v.Data)
			for {
				_, e, ok := ai.Next()
				if !ok {
					break
				}
				if e.Type == bsoncore.TypeEmbeddedDocument {
					collectEqualities(e.Data, ops, depth+1)
				}
			}
		case strings.HasPrefix(key, "$") || v.Type == bsoncore.TypeRegex:
		case isOperatorDoc(v):
			if eq, ok := lookupField(v.Data, "$eq"); ok && checkUpdatePath(key) == nil {
				*ops = append(*ops, &updateOp{kind: updSet, path: key, arg: eq})
			}
		case checkUpdatePath(key) == nil:
			*ops = append(*ops, &updateOp{kind: updSet, path: key, arg: v})
		}
	}
}

package server

import (
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

func cmdCreate(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	if err := checkCreateNS(req.db, name); err != nil {
		return nil, err
	}
	for _, opt := range []string{"capped", "viewOn", "timeseries", "clusteredIndex"} {
		if boolArg(req, opt) || (opt != "capped" && hasField(req.body, opt)) {
			return nil, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod does not support the create option %q", opt)
		}
	}
	opts := optionsOf(req.body)
	if _, err := c.s.eng.CreateCollection(req.db, name, opts); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return nil, mongoerr.New(mongoerr.CodeNamespaceExists, "Collection already exists. NS: %s.%s", req.db, name)
		}
		return nil, err
	}
	return dst, nil
}

// optionsOf returns the create options (the command without its name and
// generic arguments), as listCollections shows them.
func optionsOf(body bsoncore.Document) bson.Raw {
	elems, _ := body.Elements()
	b := bsoncore.NewDocumentBuilder()
	for _, el := range elems[1:] {
		if genericArgs[el.Key()] {
			continue
		}
		b.AppendValue(el.Key(), el.Value())
	}
	return bson.Raw(b.Build())
}

func cmdDrop(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	coll := c.s.eng.Collection(req.db, name)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "ns not found")
	}
	n := len(coll.Indexes()) + 1
	if _, err := c.s.eng.DropCollection(req.db, name); err != nil {
		return nil, err
	}
	dst = bsoncore.AppendInt32Element(dst, "nIndexesWas", int32(n))
	return bsoncore.AppendStringElement(dst, "ns", req.db+"."+name), nil
}

func cmdDropDatabase(c *clientConn, req *request, dst []byte) ([]byte, error) {
	if err := c.s.eng.DropDatabase(req.db); err != nil {
		return nil, err
	}
	return bsoncore.AppendStringElement(dst, "dropped", req.db), nil
}

// sizeOnDisk returns the file size of a table from its statistics.
func sizeOnDisk(sess *storage.Session, uri string) int64 {
	stats, err := sess.WT().Stats("statistics:" + uri)
	if err != nil {
		return 0
	}
	for _, st := range stats {
		if st.Desc == "block-manager: file size in bytes" {
			return st.Value
		}
	}
	return 0
}

func (c *clientConn) collStorage(coll *storage.Collection) (data int64, indexes map[string]int64, total int64) {
	data = sizeOnDisk(c.sess, coll.URI())
	indexes = map[string]int64{}
	for _, ix := range coll.Indexes() {
		indexes[ix.Name] = sizeOnDisk(c.sess, ix.URI())
		total += indexes[ix.Name]
	}
	return data, indexes, total
}

func cmdListDatabases(c *clientConn, req *request, dst []byte) ([]byte, error) {
	nameOnly := boolArg(req, "nameOnly")
	filter, err := docArg(req, "filter")
	if err != nil {
		return nil, err
	}
	m, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	unlock, err := c.lockStorage(readTicket)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var total int64
	a, d := bsoncore.AppendArrayElementStart(dst, "databases")
	i := 0
	for _, db := range c.s.eng.Databases() {
		var size int64
		if !nameOnly {
			for _, coll := range c.s.eng.Collections(db) {
				data, _, ix := c.collStorage(coll)
				size += data + ix
			}
		}
		b := bsoncore.NewDocumentBuilder().AppendString("name", db)
		if !nameOnly {
			b.AppendInt64("sizeOnDisk", size).AppendBoolean("empty", false)
		}
		entry := b.Build()
		if !m.Match(bson.Raw(entry)) {
			continue
		}
		total += size
		d = bsoncore.AppendDocumentElement(d, itoa(i), entry)
		i++
	}
	d, _ = bsoncore.AppendArrayEnd(d, a)
	if !nameOnly {
		d = bsoncore.AppendInt64Element(d, "totalSize", total)
		d = bsoncore.AppendInt64Element(d, "totalSizeMb", total>>20)
	}
	return d, nil
}

func idIndexSpec() bsoncore.Document {
	key := bsoncore.NewDocumentBuilder().AppendInt32("_id", 1).Build()
	return bsoncore.NewDocumentBuilder().AppendInt32("v", 2).AppendDocument("key", key).AppendString("name", "_id_").Build()
}

func cmdListCollections(c *clientConn, req *request, dst []byte) ([]byte, error) {
	filter, err := docArg(req, "filter")
	if err != nil {
		return nil, err
	}
	m, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	nameOnly := boolArg(req, "nameOnly")
	var docs [][]byte
	for _, coll := range c.s.eng.Collections(req.db) {
		b := bsoncore.NewDocumentBuilder().AppendString("name", coll.Name).AppendString("type", "collection")
		if !nameOnly {
			opts := coll.Options
			if opts == nil {
				opts = bson.Raw(bsoncore.NewDocumentBuilder().Build())
			}
			info := bsoncore.NewDocumentBuilder().AppendBoolean("readOnly", false).Build()
			b.AppendDocument("options", opts).AppendDocument("info", info).AppendDocument("idIndex", idIndexSpec())
		}
		doc := b.Build()
		if m.Match(bson.Raw(doc)) {
			docs = append(docs, doc)
		}
	}
	if len(c.s.profiler.entries(req.db)) > 0 {
		opts := bsoncore.NewDocumentBuilder().AppendBoolean("capped", true).AppendInt32("size", profileCapBytes).Build()
		doc := bsoncore.NewDocumentBuilder().AppendString("name", profileCollection).AppendString("type", "collection").AppendDocument("options", opts).Build()
		if m.Match(bson.Raw(doc)) {
			docs = append(docs, doc)
		}
	}
	return appendCursor(dst, "firstBatch", req.db+".$cmd.listCollections", 0, docs), nil
}

func cmdCreateIndexes(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	specs, err := docsArg(req, "indexes")
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "Must specify at least one index to create")
	}
	created := c.s.eng.Collection(req.db, name) == nil
	coll, err := c.ensureCollection(req.db, name)
	if err != nil {
		return nil, err
	}
	before := len(coll.Indexes()) + 1
	var toBuild []*storage.Index
	for _, spec := range specs {
		ix, err := storage.ParseIndexSpec(normaliseSpec(spec))
		if err != nil {
			return nil, err
		}
		toBuild = append(toBuild, ix)
	}
	newOnes, err := c.s.eng.CreateIndexes(coll, toBuild)
	if err != nil {
		return nil, err
	}
	dst = bsoncore.AppendBooleanElement(dst, "createdCollectionAutomatically", created)
	dst = bsoncore.AppendInt32Element(dst, "numIndexesBefore", int32(before))
	dst = bsoncore.AppendInt32Element(dst, "numIndexesAfter", int32(len(coll.Indexes())+1))
	if newOnes == 0 {
		dst = bsoncore.AppendStringElement(dst, "note", "all indexes already exist")
	}
	return dst, nil
}

// normaliseSpec puts v:2 first, as listIndexes shows specs.
func normaliseSpec(spec bson.Raw) bson.Raw {
	elems, _ := bsoncore.Document(spec).Elements()
	b := bsoncore.NewDocumentBuilder().AppendInt32("v", 2)
	for _, el := range elems {
		if el.Key() == "v" || genericArgs[el.Key()] {
			continue
		}
		b.AppendValue(el.Key(), el.Value())
	}
	return bson.Raw(b.Build())
}

func cmdListIndexes(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "ns does not exist: %s.%s", req.db, name)
	}
	docs := [][]byte{idIndexSpec()}
	for _, ix := range coll.Indexes() {
		docs = append(docs, ix.Spec)
	}
	return appendCursor(dst, "firstBatch", coll.NS(), 0, docs), nil
}

func cmdDropIndexes(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "ns not found %s.%s", req.db, name)
	}
	v, err := req.lookupErr("index")
	if err != nil {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'dropIndexes.index' is missing but a required field")
	}
	was := len(coll.Indexes()) + 1
	var names []string
	switch v.Type {
	case bsoncore.TypeString:
		if v.StringValue() == "*" {
			for _, ix := range coll.Indexes() {
				names = append(names, ix.Name)
			}
		} else {
			names = []string{v.StringValue()}
		}
	case bsoncore.TypeEmbeddedDocument:
		key := string(v.Document())
		for _, ix := range coll.Indexes() {
			if string(ix.KeyPattern()) == key {
				names = append(names, ix.Name)
			}
		}
		if len(names) == 0 {
			return nil, mongoerr.New(mongoerr.CodeIndexNotFound, "can't find index with key: %s", storage.ShellString(bson.Raw(v.Document())))
		}
	case bsoncore.TypeArray:
		vals, _ := v.Array().Values()
		for _, n := range vals {
			names = append(names, n.StringValue())
		}
	default:
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field 'dropIndexes.index' is the wrong type '%s'", typeName(v.Type))
	}
	for _, n := range names {
		if n == "_id_" {
			return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "cannot drop _id index")
		}
		if err := c.s.eng.DropIndex(coll, n); err != nil {
			if errors.Is(err, storage.ErrIndexNotFound) {
				return nil, mongoerr.New(mongoerr.CodeIndexNotFound, "index not found with name [%s]", n)
			}
			return nil, err
		}
	}
	return bsoncore.AppendInt32Element(dst, "nIndexesWas", int32(was)), nil
}

func scaleArg(req *request) (int64, error) {
	scale, err := intArg(req, "scale", 1)
	if err != nil {
		return 0, err
	}
	if scale < 1 {
		return 0, mongoerr.New(mongoerr.CodeBadValue, "scale has to be >= 1")
	}
	return scale, nil
}

func cmdCollStats(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	scale, err := scaleArg(req)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "Collection [%s.%s] not found.", req.db, name)
	}
	unlock, err := c.lockStorage(readTicket)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return c.appendCollStats(dst, coll, scale), nil
}

// appendCollStats appends collStats' fields (also $collStats'
// storageStats); the caller holds the storage lock.
func (c *clientConn) appendCollStats(dst []byte, coll *storage.Collection, scale int64) []byte {
	count, size := coll.Count(), coll.DataSize()
	storageSize, ixSizes, ixTotal := c.collStorage(coll)
	ixSizes["_id_"] = 0 // the _id index is the collection table itself
	d := bsoncore.AppendStringElement(dst, "ns", coll.NS())
	d = bsoncore.AppendInt64Element(d, "size", size/scale)
	d = bsoncore.AppendInt64Element(d, "count", count)
	if count > 0 {
		d = bsoncore.AppendInt64Element(d, "avgObjSize", size/count)
	}
	d = bsoncore.AppendInt64Element(d, "storageSize", storageSize/scale)
	d = bsoncore.AppendBooleanElement(d, "capped", false)
	if stats, err := coll.TableStats(c.sess); err == nil {
		d = appendWTStats(d, "wiredTiger", "statistics:"+coll.URI(), stats)
	}
	d = bsoncore.AppendInt32Element(d, "nindexes", int32(len(coll.Indexes())+1))
	ixd, d := bsoncore.AppendDocumentElementStart(d, "indexSizes")
	d = bsoncore.AppendInt64Element(d, "_id_", 0)
	for _, ix := range coll.Indexes() {
		d = bsoncore.AppendInt64Element(d, ix.Name, ixSizes[ix.Name]/scale)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, ixd)
	d = bsoncore.AppendInt64Element(d, "totalIndexSize", ixTotal/scale)
	d = bsoncore.AppendInt64Element(d, "totalSize", (storageSize+ixTotal)/scale)
	d = bsoncore.AppendInt64Element(d, "scaleFactor", scale)
	return d
}

func cmdDBStats(c *clientConn, req *request, dst []byte) ([]byte, error) {
	scale, err := scaleArg(req)
	if err != nil {
		return nil, err
	}
	unlock, err := c.lockStorage(readTicket)
	if err != nil {
		return nil, err
	}
	defer unlock()
	colls := c.s.eng.Collections(req.db)
	var objects, dataSize, storageSize, indexes, indexSize int64
	for _, coll := range colls {
		objects += coll.Count()
		dataSize += coll.DataSize()
		data, _, ix := c.collStorage(coll)
		storageSize += data
		indexSize += ix
		indexes += int64(len(coll.Indexes()) + 1)
	}
	d := bsoncore.AppendStringElement(dst, "db", req.db)
	d = bsoncore.AppendInt64Element(d, "collections", int64(len(colls)))
	d = bsoncore.AppendInt64Element(d, "views", 0)
	d = bsoncore.AppendInt64Element(d, "objects", objects)
	avg := 0.0
	if objects > 0 {
		avg = float64(dataSize) / float64(objects)
	}
	d = bsoncore.AppendDoubleElement(d, "avgObjSize", avg)
	d = bsoncore.AppendDoubleElement(d, "dataSize", float64(dataSize/scale))
	d = bsoncore.AppendDoubleElement(d, "storageSize", float64(storageSize/scale))
	d = bsoncore.AppendInt64Element(d, "indexes", indexes)
	d = bsoncore.AppendDoubleElement(d, "indexSize", float64(indexSize/scale))
	d = bsoncore.AppendDoubleElement(d, "totalSize", float64((storageSize+indexSize)/scale))
	d = bsoncore.AppendDoubleElement(d, "scaleFactor", float64(scale))
	return d, nil
}

var _ = wt.ErrNotFound

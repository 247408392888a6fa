package itest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var ctx = context.Background()

func TestHandshakeAndAdminCommands(t *testing.T) {
	t.Parallel()
	s := start(t, "--wiredTigerCacheSizeGB", "0.25", "--setParameter", "journalCommitInterval=50")
	hello := s.run(t, "admin", bson.D{{Key: "hello", Value: 1}})
	if hello["isWritablePrimary"] != true || hello["maxWireVersion"] != int32(9) {
		t.Errorf("hello = %v", hello)
	}
	im := s.run(t, "admin", bson.D{{Key: "isMaster", Value: 1}})
	if im["ismaster"] != true {
		t.Errorf("isMaster = %v", im)
	}
	s.run(t, "admin", bson.D{{Key: "ping", Value: 1}})
	bi := s.run(t, "admin", bson.D{{Key: "buildInfo", Value: 1}})
	if bi["version"] != "4.4.29" {
		t.Errorf("buildInfo.version = %v", bi["version"])
	}
	if mm, ok := bi["minimongod"].(bson.M); !ok || !strings.Contains(mm["imitates"].(string), "MongoDB 4.4") {
		t.Errorf("buildInfo.minimongod = %v", bi["minimongod"])
	}
	hi := s.run(t, "admin", bson.D{{Key: "hostInfo", Value: 1}})
	if sys := hi["system"].(bson.M); sys["numCores"].(int32) < 1 {
		t.Errorf("hostInfo = %v", hi)
	}
	opts := s.run(t, "admin", bson.D{{Key: "getCmdLineOpts", Value: 1}})
	parsed := opts["parsed"].(bson.M)
	cache := parsed["storage"].(bson.M)["wiredTiger"].(bson.M)["engineConfig"].(bson.M)["cacheSizeGB"]
	if cache != 0.25 {
		t.Errorf("parsed cacheSizeGB = %v (%v)", cache, parsed)
	}
	if argv := opts["argv"].(bson.A); len(argv) < 5 {
		t.Errorf("argv = %v", argv)
	}
	ss := s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})
	max := ss["wiredTiger"].(bson.M)["cache"].(bson.M)["maximum bytes configured"]
	if max != int64(268435456) {
		t.Errorf("maximum bytes configured = %v, want 268435456", max)
	}
	for _, k := range []string{"host", "version", "process", "pid", "uptime", "uptimeMillis", "localTime", "connections", "opcounters", "mem", "network", "metrics", "storageEngine"} {
		if _, ok := ss[k]; !ok {
			t.Errorf("serverStatus has no %s", k)
		}
	}
	if ss["wiredTiger"].(bson.M)["uri"] != "statistics:" {
		t.Errorf("wiredTiger.uri = %v", ss["wiredTiger"].(bson.M)["uri"])
	}
	// Excluding a section.
	ss = s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}, {Key: "wiredTiger", Value: 0}})
	if _, ok := ss["wiredTiger"]; ok {
		t.Error("serverStatus with wiredTiger: 0 still has wiredTiger")
	}
	ce := s.runErr(t, "admin", bson.D{{Key: "noSuchCommand", Value: 1}})
	if ce.Code != 59 || ce.Name != "CommandNotFound" {
		t.Errorf("unknown command: %v", ce)
	}
	s.run(t, "admin", bson.D{{Key: "endSessions", Value: bson.A{}}})
}

func TestParameters(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "journalCommitInterval=50")
	gp := s.run(t, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "journalCommitInterval", Value: 1}})
	if gp["journalCommitInterval"] != int32(50) {
		t.Errorf("journalCommitInterval = %v", gp)
	}
	all := s.run(t, "admin", bson.D{{Key: "getParameter", Value: "*"}})
	if _, ok := all["wiredTigerEngineRuntimeConfig"]; !ok {
		t.Errorf("getParameter '*' = %v", all)
	}
	sp := s.run(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: "eviction_target=70,eviction_trigger=90"}})
	if _, ok := sp["was"]; !ok {
		t.Errorf("setParameter reply = %v", sp)
	}
	gp = s.run(t, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: 1}})
	if gp["wiredTigerEngineRuntimeConfig"] != "eviction_target=70,eviction_trigger=90" {
		t.Errorf("runtime config = %v", gp)
	}
	ce := s.runErr(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: "no_such_setting=1"}})
	if ce.Code != 2 || ce.Message != "WiredTiger reconfiguration failed with error code (22): Invalid argument: unknown configuration key: 'no_such_setting'" {
		t.Errorf("bad runtime config: %v", ce)
	}
	ce = s.runErr(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "noSuchParameter", Value: 1}})
	if ce.Code != 72 || ce.Message != "attempted to set unrecognized parameter [noSuchParameter], use help:true to see options " {
		t.Errorf("unknown parameter: %v", ce)
	}
	ce = s.runErr(t, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "noSuchParameter", Value: 1}})
	if ce.Code != 72 || ce.Message != "no option found to get" {
		t.Errorf("unknown getParameter: %v", ce)
	}
}

func TestCRUD(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("c")
	res, err := c.InsertMany(ctx, []any{bson.M{"_id": 1, "a": 1, "s": "x"}, bson.M{"_id": 2, "a": 2}, bson.M{"a": 3}})
	if err != nil || len(res.InsertedIDs) != 3 {
		t.Fatalf("insert: %v %v", res, err)
	}
	// Duplicate _id: E11000 in writeErrors, ordered stops at it.
	_, err = c.InsertMany(ctx, []any{bson.M{"_id": 10}, bson.M{"_id": 1}, bson.M{"_id": 11}})
	var bwe mongo.BulkWriteException
	if !errorsAs(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Code != 11000 || bwe.WriteErrors[0].Index != 1 {
		t.Fatalf("duplicate insert: %v", err)
	}
	if !strings.Contains(bwe.WriteErrors[0].Message, "E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1 }") {
		t.Errorf("dup message = %q", bwe.WriteErrors[0].Message)
	}
	if n := must(c.CountDocuments(ctx, bson.M{"_id": 11}))(t); n != 0 {
		t.Error("ordered insert went on after the duplicate")
	}
	// Unordered goes on.
	_, err = c.InsertMany(ctx, []any{bson.M{"_id": 1}, bson.M{"_id": 12}}, options.InsertMany().SetOrdered(false))
	if n := must(c.CountDocuments(ctx, bson.M{"_id": 12}))(t); err == nil || n != 1 {
		t.Errorf("unordered insert: %v, n=%d", err, n)
	}
	// Long, double and int _id compare by value.
	if _, err := c.InsertOne(ctx, bson.M{"_id": int64(2)}); err == nil {
		t.Error("int64(2) duplicates int32(2): want E11000")
	}
	var doc bson.M
	if err := c.FindOne(ctx, bson.M{"_id": 2.0}).Decode(&doc); err != nil || doc["a"] != int32(2) {
		t.Errorf("find _id 2.0: %v %v", doc, err)
	}
	// Filters, projection, sort, skip, limit.
	cur, err := c.Find(ctx, bson.M{"a": bson.M{"$gte": 2}}, options.Find().SetSort(bson.M{"a": -1}).SetProjection(bson.M{"a": 1, "_id": 0}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["a"] != int32(3) || len(got[0]) != 1 {
		t.Errorf("find sorted projected = %v", got)
	}
	// update $set $inc $unset, upsert, multi, replacement.
	ur, err := c.UpdateOne(ctx, bson.M{"_id": 1}, bson.M{"$set": bson.M{"b": "new"}, "$inc": bson.M{"a": 5}, "$unset": bson.M{"s": ""}})
	if err != nil || ur.MatchedCount != 1 || ur.ModifiedCount != 1 {
		t.Fatalf("updateOne: %v %v", ur, err)
	}
	doc = bson.M{}
	noErr(t, c.FindOne(ctx, bson.M{"_id": 1}).Decode(&doc))
	if doc["a"] != int32(6) || doc["b"] != "new" || doc["s"] != nil {
		t.Errorf("after update: %v", doc)
	}
	ur, err = c.UpdateOne(ctx, bson.M{"_id": 99}, bson.M{"$set": bson.M{"a": 99}}, options.UpdateOne().SetUpsert(true))
	if err != nil || ur.UpsertedID != int32(99) {
		t.Errorf("upsert: %v %v", ur, err)
	}
	ur, err = c.UpdateMany(ctx, bson.M{}, bson.M{"$set": bson.M{"m": true}})
	total := must(c.CountDocuments(ctx, bson.M{}))(t)
	if err != nil || ur.MatchedCount != total || ur.ModifiedCount != total {
		t.Errorf("updateMany: %v %v (total %d)", ur, err, total)
	}
	if _, err := c.ReplaceOne(ctx, bson.M{"_id": 2}, bson.M{"only": 1}); err != nil {
		t.Fatal(err)
	}
	doc = bson.M{}
	noErr(t, c.FindOne(ctx, bson.M{"_id": 2}).Decode(&doc))
	if doc["only"] != int32(1) || doc["a"] != nil {
		t.Errorf("after replace: %v", doc)
	}
	_, err = c.UpdateOne(ctx, bson.M{"_id": 2}, bson.M{"$set": bson.M{"_id": 3}})
	var we mongo.WriteException
	if !errorsAs(err, &we) || we.WriteErrors[0].Code != 66 {
		t.Errorf("changing _id: %v", err)
	}
	// findAndModify
	var fam bson.M
	err = c.FindOneAndUpdate(ctx, bson.M{"_id": 1}, bson.M{"$inc": bson.M{"a": 1}}, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&fam)
	if err != nil || fam["a"] != int32(7) {
		t.Errorf("findAndModify new: %v %v", fam, err)
	}
	err = c.FindOneAndDelete(ctx, bson.M{"_id": 1}).Decode(&fam)
	if err != nil || fam["_id"] != int32(1) {
		t.Errorf("findAndModify remove: %v %v", fam, err)
	}
	// delete one / many
	dr, err := c.DeleteOne(ctx, bson.M{"_id": 99})
	if err != nil || dr.DeletedCount != 1 {
		t.Errorf("deleteOne: %v %v", dr, err)
	}
	dr, err = c.DeleteMany(ctx, bson.M{"m": true})
	if err != nil || dr.DeletedCount != 3 { // the _id 10, 12 and generated ones; 2 lost m
		t.Errorf("deleteMany: %v %v, want 3 deleted", dr, err)
	}
	// The replaced document lost m.
	if n := must(c.CountDocuments(ctx, bson.M{}))(t); n != 1 {
		t.Errorf("%d documents left, want 1", n)
	}
	cnt := s.run(t, "test", bson.D{{Key: "count", Value: "c"}})
	if cnt["n"] != int64(1) {
		t.Errorf("count = %v", cnt)
	}
}

func TestCursorsAcrossBatches(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("big")
	var docs []any
	for i := 0; i < 1000; i++ {
		docs = append(docs, bson.M{"_id": i, "v": i % 7, "pad": strings.Repeat("x", 100)})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Find(ctx, bson.M{}, options.Find().SetBatchSize(37))
	if err != nil {
		t.Fatal(err)
	}
	n, last := 0, -1
	for cur.Next(ctx) {
		var d struct {
			ID int `bson:"_id"`
		}
		noErr(t, cur.Decode(&d))
		if d.ID <= last {
			t.Fatalf("out of order: %d after %d", d.ID, last)
		}
		last = d.ID
		n++
	}
	if err := cur.Err(); err != nil || n != 1000 {
		t.Fatalf("iterated %d, err %v", n, err)
	}
	// sort in memory, skip and limit, across batches
	cur, err = c.Find(ctx, bson.M{"v": 3}, options.Find().SetSort(bson.M{"_id": -1}).SetSkip(5).SetLimit(50).SetBatchSize(10))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 || got[0]["_id"] != int32(997-5*7) {
		t.Errorf("sorted skip/limit: %d docs, first %v", len(got), got[0]["_id"])
	}
	// killCursors
	cur = must(c.Find(ctx, bson.M{}, options.Find().SetBatchSize(2)))(t)
	id := cur.ID()
	if id == 0 {
		t.Fatal("expected an open cursor")
	}
	kc := s.run(t, "test", bson.D{{Key: "killCursors", Value: "big"}, {Key: "cursors", Value: bson.A{id}}})
	if killed := kc["cursorsKilled"].(bson.A); len(killed) != 1 {
		t.Errorf("killCursors = %v", kc)
	}
	ce := s.runErr(t, "test", bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "big"}})
	if ce.Code != 43 {
		t.Errorf("getMore after kill: %v", ce)
	}
	// aggregate: countDocuments, $group $sum, $count, $skip, $limit
	n64, err := c.CountDocuments(ctx, bson.M{"v": 3})
	if err != nil || n64 != 143 {
		t.Errorf("countDocuments = %d %v", n64, err)
	}
	acur, err := c.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.M{"v": bson.M{"$in": bson.A{1, 2}}}}},
		{{Key: "$group", Value: bson.M{"_id": nil, "total": bson.M{"$sum": "$v"}, "n": bson.M{"$sum": 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var agg []bson.M
	noErr(t, acur.All(ctx, &agg))
	if len(agg) != 1 || agg[0]["n"] != int32(286) || agg[0]["total"] != int32(143+143*2) {
		t.Errorf("$group = %v", agg)
	}
	acur = must(c.Aggregate(ctx, mongo.Pipeline{{{Key: "$skip", Value: 10}}, {{Key: "$limit", Value: 5}}, {{Key: "$count", Value: "k"}}}))(t)
	noErr(t, acur.All(ctx, &agg))
	if len(agg) != 1 || agg[0]["k"] != int32(5) {
		t.Errorf("$count = %v", agg)
	}
}

func TestIndexes(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("ix")
	for i := 0; i < 300; i++ {
		must(c.InsertOne(ctx, bson.M{"_id": i, "k": i % 30, "u": fmt.Sprint("u", i)}))(t)
	}
	names, err := c.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "k", Value: 1}}},
		{Keys: bson.D{{Key: "u", Value: -1}}, Options: options.Index().SetUnique(true)},
	})
	if err != nil || len(names) != 2 || names[0] != "k_1" || names[1] != "u_-1" {
		t.Fatalf("createIndexes: %v %v", names, err)
	}
	_, err = c.InsertOne(ctx, bson.M{"_id": 1000, "u": "u5"})
	var we mongo.WriteException
	if !errorsAs(err, &we) || we.WriteErrors[0].Code != 11000 || !strings.Contains(we.WriteErrors[0].Message, "index: u_-1") {
		t.Errorf("unique index: %v", err)
	}
	// Queries through the index give the same answers as a scan.
	for _, f := range []bson.M{{"k": 7}, {"k": bson.M{"$gt": 25}}, {"k": bson.M{"$in": bson.A{1, 2, 3}}}, {"k": bson.M{"$gte": 3, "$lt": 5}}} {
		n, err := c.CountDocuments(ctx, f)
		want := int64(0)
		for i := 0; i < 300; i++ {
			if matchK(f, i%30) {
				want++
			}
		}
		if err != nil || n != want {
			t.Errorf("count %v = %d, want %d (%v)", f, n, want, err)
		}
	}
	before := s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})["metrics"].(bson.M)["queryExecutor"].(bson.M)["scannedObjects"].(int64)
	must(c.CountDocuments(ctx, bson.M{"k": 7}))(t)
	after := s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})["metrics"].(bson.M)["queryExecutor"].(bson.M)["scannedObjects"].(int64)
	if after-before != 10 {
		t.Errorf("an equality on an indexed field examined %d documents, want 10", after-before)
	}
	// Sort by index
	cur := must(c.Find(ctx, bson.M{}, options.Find().SetSort(bson.M{"u": 1}).SetLimit(3)))(t)
	var got []bson.M
	noErr(t, cur.All(ctx, &got))
	if len(got) != 3 || got[0]["u"] != "u0" || got[1]["u"] != "u1" || got[2]["u"] != "u10" {
		t.Errorf("sort by u = %v", got)
	}
	// Updating an indexed field moves its entry.
	must(c.UpdateOne(ctx, bson.M{"_id": 7}, bson.M{"$set": bson.M{"k": 1000}}))(t)
	if n := must(c.CountDocuments(ctx, bson.M{"k": 1000}))(t); n != 1 {
		t.Errorf("after update, k=1000 count %d", n)
	}
	if n := must(c.CountDocuments(ctx, bson.M{"k": 7}))(t); n != 9 {
		t.Errorf("after update, k=7 count %d", n)
	}
	specs, err := c.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 3 || specs[0].Name != "_id_" || specs[2].Unique == nil || !*specs[2].Unique {
		t.Errorf("listIndexes: %v %v", specs, err)
	}
	if err := c.Indexes().DropOne(ctx, "k_1"); err != nil {
		t.Fatal(err)
	}
	ce := s.runErr(t, "test", bson.D{{Key: "dropIndexes", Value: "ix"}, {Key: "index", Value: "nope"}})
	if ce.Code != 27 {
		t.Errorf("drop missing index: %v", ce)
	}
	s.run(t, "test", bson.D{{Key: "createIndexes", Value: "ix"}, {Key: "indexes", Value: bson.A{bson.M{"key": bson.M{"at": 1}, "name": "ttl", "expireAfterSeconds": 3600}}}})
	specs = must(c.Indexes().ListSpecifications(ctx))(t)
	found := false
	for _, sp := range specs {
		if sp.Name == "ttl" && sp.ExpireAfterSeconds != nil && *sp.ExpireAfterSeconds == 3600 {
			found = true
		}
	}
	if !found {
		t.Errorf("TTL index spec not kept: %v", specs)
	}
}

func matchK(f bson.M, k int) bool {
	switch v := f["k"].(type) {
	case int:
		return k == v
	case bson.M:
		ok := true
		for op, x := range v {
			switch op {
			case "$gt":
				ok = ok && k > x.(int)
			case "$gte":
				ok = ok && k >= x.(int)
			case "$lt":
				ok = ok && k < x.(int)
			case "$in":
				in := false
				for _, e := range x.(bson.A) {
					in = in || e.(int) == k
				}
				ok = ok && in
			}
		}
		return ok
	}
	return false
}

func TestCollectionsAndStats(t *testing.T) {
	t.Parallel()
	s := start(t)
	db := s.db("shop")
	if err := db.CreateCollection(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	ce := s.runErr(t, "shop", bson.D{{Key: "create", Value: "orders"}})
	if ce.Code != 48 {
		t.Errorf("create existing: %v", ce)
	}
	must(db.Collection("items").InsertMany(ctx, []any{bson.M{"x": 1}, bson.M{"x": 2}}))(t)
	names, err := db.ListCollectionNames(ctx, bson.M{})
	if err != nil || len(names) != 2 {
		t.Errorf("listCollections: %v %v", names, err)
	}
	dbs, err := s.client.ListDatabaseNames(ctx, bson.M{})
	if err != nil || !contains(dbs, "shop") {
		t.Errorf("listDatabases: %v %v", dbs, err)
	}
	cs := s.run(t, "shop", bson.D{{Key: "collStats", Value: "items"}})
	if cs["count"] != int64(2) || cs["nindexes"] != int32(1) || cs["size"].(int64) <= 0 {
		t.Errorf("collStats = %v", cs)
	}
	ds := s.run(t, "shop", bson.D{{Key: "dbStats", Value: 1}})
	for _, k := range []string{"collections", "objects", "avgObjSize", "dataSize", "storageSize", "indexes", "indexSize"} {
		if _, ok := ds[k]; !ok {
			t.Errorf("dbStats has no %s: %v", k, ds)
		}
	}
	if ds["objects"] != int64(2) {
		t.Errorf("dbStats.objects = %v", ds["objects"])
	}
	if err := db.Collection("orders").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	ce = s.runErr(t, "shop", bson.D{{Key: "drop", Value: "orders"}})
	if ce.Code != 26 {
		t.Errorf("drop missing: %v", ce)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	dbs = must(s.client.ListDatabaseNames(ctx, bson.M{}))(t)
	if contains(dbs, "shop") {
		t.Errorf("dropDatabase left %v", dbs)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestServerSideIDAndSortLimit(t *testing.T) {
	t.Parallel()
	s := start(t)
	// The driver adds _id itself; a raw insert command shows the server's.
	s.run(t, "test", bson.D{{Key: "insert", Value: "gen"}, {Key: "documents", Value: bson.A{bson.M{"a": 1}}}})
	var doc bson.M
	if err := s.db("test").Collection("gen").FindOne(ctx, bson.M{"a": 1}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["_id"].(bson.ObjectID); !ok {
		t.Errorf("server-side _id = %T %v, want an ObjectId", doc["_id"], doc["_id"])
	}
	c := s.db("test").Collection("sorted")
	var docs []any
	for i := 0; i < 100; i++ {
		docs = append(docs, bson.M{"_id": i, "v": 100 - i, "pad": strings.Repeat("p", 200)})
	}
	must(c.InsertMany(ctx, docs))(t)
	s.run(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryExecMaxBlockingSortBytes", Value: 10000}})
	_, err := c.Find(ctx, bson.M{}, options.Find().SetSort(bson.M{"v": 1}))
	var ce mongo.CommandError
	if !errorsAs(err, &ce) || ce.Code != 292 || !strings.Contains(ce.Message, "Sort exceeded memory limit of 10000 bytes") {
		t.Errorf("in-memory sort past the limit: %v", err)
	}
	// Through an index the same sort needs no memory.
	must(c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "v", Value: 1}}}))(t)
	cur, err := c.Find(ctx, bson.M{}, options.Find().SetSort(bson.M{"v": 1}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	noErr(t, cur.All(ctx, &got))
	if len(got) != 100 || got[0]["v"] != int32(1) {
		t.Errorf("sort by index: %d docs, first %v", len(got), got[0])
	}
}

func TestIdleCursorsTimeOut(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "cursorTimeoutMillis=300")
	c := s.db("test").Collection("cur")
	var docs []any
	for i := 0; i < 50; i++ {
		docs = append(docs, bson.M{"_id": i})
	}
	must(c.InsertMany(ctx, docs))(t)
	first := s.run(t, "test", bson.D{{Key: "find", Value: "cur"}, {Key: "batchSize", Value: 5}})
	id := first["cursor"].(bson.M)["id"].(int64)
	if id == 0 {
		t.Fatal("no cursor left open")
	}
	// Wait for the reaper (a getMore would keep the cursor alive).
	deadline := time.Now().Add(10 * time.Second)
	for timedOut(t, s) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no cursor timed out within 10s of a 300 ms cursorTimeoutMillis")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ce := s.runErr(t, "test", bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "cur"}})
	if ce.Code != 43 {
		t.Errorf("getMore on an idle cursor after its timeout: %v", ce)
	}
	if n := timedOut(t, s); n != 1 {
		t.Errorf("metrics.cursor.timedOut = %d, want 1", n)
	}
}

// timedOut is serverStatus' metrics.cursor.timedOut.
func timedOut(t *testing.T, s *server) int64 {
	t.Helper()
	n := num(s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}}), "metrics.cursor.timedOut")
	if n < 0 {
		t.Fatal("serverStatus has no metrics.cursor.timedOut")
	}
	return n
}

package itest

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// renameCollection within a database (dropTarget), validate, and the
// $collStats, $addFields, $unwind, $project and $sort stages.
func TestRenameValidateAndStages(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("a")
	must(c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "tags", Value: bson.A{"x", "y"}}, {Key: "n", Value: 2}},
		bson.D{{Key: "_id", Value: 2}, {Key: "tags", Value: bson.A{}}, {Key: "n", Value: 1}}}))(t)
	must(c.Indexes().CreateOne(ctx, mongoIndex("n")))(t)
	must(s.db("test").Collection("b").InsertOne(ctx, bson.D{{Key: "_id", Value: 9}}))(t)
	ren := func(drop bool) bson.D {
		return bson.D{{Key: "renameCollection", Value: "test.a"}, {Key: "to", Value: "test.b"}, {Key: "dropTarget", Value: drop}}
	}
	if ce := s.runErr(t, "admin", ren(false)); ce.Code != 48 {
		t.Errorf("rename onto an existing collection: %v", ce)
	}
	s.run(t, "admin", ren(true))
	names := must(s.db("test").ListCollectionNames(ctx, bson.D{}))(t)
	if len(names) != 1 || names[0] != "b" {
		t.Errorf("collections after rename: %v", names)
	}
	b := s.db("test").Collection("b")
	if n := must(b.CountDocuments(ctx, bson.D{{Key: "n", Value: 2}}))(t); n != 1 {
		t.Errorf("renamed collection answers %d for n: 2", n)
	}
	if ce := s.runErr(t, "admin", ren(false)); ce.Code != 26 {
		t.Errorf("rename of a missing collection: %v", ce)
	}
	v := s.run(t, "test", bson.D{{Key: "validate", Value: "b"}})
	if v["valid"] != true || v["nrecords"] != int64(2) || len(v["errors"].(bson.A)) != 0 || num(v, "keysPerIndex.n_1") != 2 {
		t.Errorf("validate = %v", v)
	}
	agg := func(pipeline bson.A) []bson.M {
		t.Helper()
		cur, err := b.Aggregate(ctx, pipeline)
		if err != nil {
			t.Fatal(err)
		}
		var raws []bson.Raw
		if err := cur.All(ctx, &raws); err != nil {
			t.Fatal(err)
		}
		out := make([]bson.M, len(raws))
		for i, r := range raws {
			out[i] = toM(t, r)
		}
		return out
	}
	cs := agg(bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}, {Key: "count", Value: bson.D{}}}}}})
	if len(cs) != 1 || cs[0]["count"] != int64(2) || num(cs[0], "storageStats.count") != 2 || field(cs[0], "storageStats.nindexes") != int32(2) {
		t.Errorf("$collStats = %v", cs)
	}
	out := agg(bson.A{bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$tags"}, {Key: "includeArrayIndex", Value: "i"}, {Key: "preserveNullAndEmptyArrays", Value: true}}}},
		bson.D{{Key: "$addFields", Value: bson.D{{Key: "m", Value: "$n"}, {Key: "k", Value: "const"}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}, {Key: "i", Value: 1}}}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "tags", Value: 1}, {Key: "m", Value: 1}, {Key: "k", Value: 1}, {Key: "i", Value: 1}}}}})
	if len(out) != 3 || out[0]["_id"] != int32(2) || out[1]["tags"] != "x" || out[2]["tags"] != "y" || out[2]["i"] != int64(1) ||
		out[1]["m"] != int32(2) || out[1]["k"] != "const" {
		t.Errorf("$unwind $addFields $sort $project = %v", out)
	}
	py := runPymongo(t, s, "s = list(db.b.aggregate([{'$collStats': {'storageStats': {}}}]))[0]['storageStats']\nprint(s['count'], s['nindexes'], db.command('validate', 'b')['valid'])\n")
	if py != "2 2 True" {
		t.Errorf("pymongo $collStats and validate: %q", py)
	}
}

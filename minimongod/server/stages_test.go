package server

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// specValue is the value of {v: spec}: a stage's specification.
func specValue(t *testing.T, spec any) bsoncore.Value {
	t.Helper()
	b, err := bson.Marshal(bson.D{{Key: "v", Value: spec}})
	if err != nil {
		t.Fatal(err)
	}
	return bsoncore.Document(b).Lookup("v")
}

// runStage compiles a stage with compile and runs it on docs; it returns
// the output as extended JSON, or the compile error's code.
func runStage(t *testing.T, compile func(bsoncore.Value) (stage, error), spec any, docs []bson.D) ([]string, int32) {
	t.Helper()
	st, err := compile(specValue(t, spec))
	if err != nil {
		me, ok := err.(*mongoerr.Error)
		if !ok {
			t.Fatalf("compile %v: %v is not a server error", spec, err)
		}
		return nil, me.Code
	}
	in := make([][]byte, len(docs))
	for i, d := range docs {
		in[i] = marshalDoc(t, d)
	}
	out, err := st(in)
	if err != nil {
		t.Fatalf("run %v: %v", spec, err)
	}
	var got []string
	for _, d := range out {
		if err := bsoncore.Document(d).Validate(); err != nil {
			t.Fatalf("stage %v produced invalid BSON %x: %v", spec, d, err)
		}
		got = append(got, bson.Raw(d).String())
	}
	return got, 0
}

// ejson renders documents as runStage does, for the expected output.
func ejson(t *testing.T, docs ...bson.D) []string {
	t.Helper()
	var out []string
	for _, d := range docs {
		out = append(out, bson.Raw(marshalDoc(t, d)).String())
	}
	return out
}

// $addFields sets top-level fields to constants or "$path" values: an
// existing field in place, new ones after the rest in the order given; a
// path the document lacks leaves the field out, as in mongod.
func TestAddFieldsStage(t *testing.T) {
	type d = bson.D
	doc := d{{Key: "_id", Value: 1}, {Key: "a", Value: 2}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}}
	cases := []struct {
		name     string
		spec     any
		want     []bson.D
		wantCode int32
	}{
		{"constant appended", d{{Key: "x", Value: 7}}, []bson.D{{{Key: "_id", Value: 1}, {Key: "a", Value: 2}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}, {Key: "x", Value: 7}}}, 0},
		{"existing field replaced in place", d{{Key: "a", Value: "$b.c"}}, []bson.D{{{Key: "_id", Value: 1}, {Key: "a", Value: "x"}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}}}, 0},
		{"new fields in the order given", d{{Key: "z", Value: "$a"}, {Key: "y", Value: true}}, []bson.D{{{Key: "_id", Value: 1}, {Key: "a", Value: 2}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}, {Key: "z", Value: 2}, {Key: "y", Value: true}}}, 0},
		{"a missing path adds nothing", d{{Key: "n", Value: "$nope"}, {Key: "m", Value: 1}}, []bson.D{{{Key: "_id", Value: 1}, {Key: "a", Value: 2}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}, {Key: "m", Value: 1}}}, 0},
		{"a missing path removes the field", d{{Key: "a", Value: "$b.nope"}}, []bson.D{{{Key: "_id", Value: 1}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}}}, 0},
		{"a null value is kept", d{{Key: "a", Value: nil}}, []bson.D{{{Key: "_id", Value: 1}, {Key: "a", Value: nil}, {Key: "b", Value: d{{Key: "c", Value: "x"}}}}}, 0},
		{"not an object", "x", nil, 40272},
		{"dotted field", d{{Key: "b.c", Value: 1}}, nil, mongoerr.CodeNotImplemented},
		{"operator field", d{{Key: "$x", Value: 1}}, nil, mongoerr.CodeNotImplemented},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, code := runStage(t, compileAddFields, c.spec, []bson.D{doc})
			if code != c.wantCode {
				t.Fatalf("code %d, want %d", code, c.wantCode)
			}
			if want := ejson(t, c.want...); code == 0 && !slices.Equal(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

// $unwind yields one document per element of an array field (with its
// index when asked), passes a scalar through, and drops a document whose
// field is null, missing or an empty array unless asked to keep it.
func TestUnwindStage(t *testing.T) {
	type d = bson.D
	arr := d{{Key: "_id", Value: 1}, {Key: "t", Value: bson.A{"x", "y"}}, {Key: "k", Value: 0}}
	scalar := d{{Key: "_id", Value: 2}, {Key: "t", Value: 5}}
	empty := d{{Key: "_id", Value: 3}, {Key: "t", Value: bson.A{}}}
	null := d{{Key: "_id", Value: 4}, {Key: "t", Value: nil}}
	missing := d{{Key: "_id", Value: 5}}
	all := []bson.D{arr, scalar, empty, null, missing}
	cases := []struct {
		name     string
		spec     any
		want     []bson.D
		wantCode int32
	}{
		{"path", "$t", []bson.D{
			{{Key: "_id", Value: 1}, {Key: "t", Value: "x"}, {Key: "k", Value: 0}},
			{{Key: "_id", Value: 1}, {Key: "t", Value: "y"}, {Key: "k", Value: 0}},
			scalar}, 0},
		{"with the array index", d{{Key: "path", Value: "$t"}, {Key: "includeArrayIndex", Value: "i"}}, []bson.D{
			{{Key: "_id", Value: 1}, {Key: "t", Value: "x"}, {Key: "k", Value: 0}, {Key: "i", Value: int64(0)}},
			{{Key: "_id", Value: 1}, {Key: "t", Value: "y"}, {Key: "k", Value: 0}, {Key: "i", Value: int64(1)}},
			{{Key: "_id", Value: 2}, {Key: "t", Value: 5}, {Key: "i", Value: nil}}}, 0},
		{"keeping null, missing and empty", d{{Key: "path", Value: "$t"}, {Key: "preserveNullAndEmptyArrays", Value: true}}, []bson.D{
			{{Key: "_id", Value: 1}, {Key: "t", Value: "x"}, {Key: "k", Value: 0}},
			{{Key: "_id", Value: 1}, {Key: "t", Value: "y"}, {Key: "k", Value: 0}},
			scalar, {{Key: "_id", Value: 3}}, null, missing}, 0},
		{"path without $", "t", nil, 28818},
		{"dotted path", "$t.x", nil, mongoerr.CodeNotImplemented},
		{"a number", 1, nil, 15981},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, code := runStage(t, compileUnwind, c.spec, all)
			if code != c.wantCode {
				t.Fatalf("code %d, want %d", code, c.wantCode)
			}
			if want := ejson(t, c.want...); code == 0 && !slices.Equal(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

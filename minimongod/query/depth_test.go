package query

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// partsPath is a dotted path of n parts named p.
func partsPath(p string, n int) string { return strings.TrimSuffix(strings.Repeat(p+".", n), ".") }

// nestedValue is {a: {a: ... {a: 1}}} with levels levels of elements.
func nestedValue(levels int) bson.D {
	d := bson.D{{Key: "a", Value: 1}}
	for i := 1; i < levels; i++ {
		d = bson.D{{Key: "a", Value: d}}
	}
	return d
}

func rawDoc(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// treeDepth is the number of levels of nodes below n.
func treeDepth(n *updNode) int {
	deepest := 0
	for _, k := range n.kids {
		deepest = max(deepest, 1+treeDepth(k))
	}
	return deepest
}

func TestDeepPathConflicts(t *testing.T) {
	long, longer := partsPath("a", 300), partsPath("a", 400)
	tests := []struct {
		name  string
		paths []string
		at    string // "" when the paths do not conflict
	}{
		{"a prefix of 300 parts and 400", []string{longer, long}, long},
		{"400 parts and a prefix of 300", []string{long, longer}, long},
		{"the same 300 parts twice", []string{long, long + ".b"}, long},
		{"apart after the 200th part", []string{long + ".x", long + ".y"}, ""},
		{"apart at the 201st part", []string{partsPath("a", 200) + ".x.y", partsPath("a", 200) + ".y.x"}, ""},
		{"201 parts and 202 sharing them", []string{partsPath("a", 201), partsPath("a", 202)}, partsPath("a", 201)},
		{"a short prefix", []string{longer, "a"}, "a"},
	}
	for _, tc := range tests {
		var set bson.D
		for _, p := range tc.paths {
			set = append(set, bson.E{Key: p, Value: 1})
		}
		_, err := CompileUpdate(rawDoc(t, bson.D{{Key: "$set", Value: set}}))
		code, msg := errInfo(err)
		switch {
		case tc.at == "" && err != nil:
			t.Errorf("%s: %d %q, want no conflict", tc.name, code, msg)
		case tc.at != "" && (code != 40 || !strings.HasSuffix(msg, "would create a conflict at '"+tc.at+"'")):
			t.Errorf("%s: %d %.80q, want a conflict at %.40q...", tc.name, code, msg, tc.at)
		}
	}
}

// TestDeepPathTreeIsBounded checks that a path of 500,000 parts is held in
// at most maxPathNodes levels of nodes.
func TestDeepPathTreeIsBounded(t *testing.T) {
	u, err := CompileUpdate(rawDoc(t, bson.D{{Key: "$set", Value: bson.D{{Key: partsPath("a", 500000), Value: 1}}}}))
	if err != nil {
		t.Fatal(err)
	}
	if d := treeDepth(u.tree); d != maxPathNodes {
		t.Errorf("tree of a 500,000-part path is %d levels deep, want %d", d, maxPathNodes)
	}
}

// TestUpdateNestingLimit checks mongod's 180 levels for what an update
// writes: the element's level plus the nesting of its value.
func TestUpdateNestingLimit(t *testing.T) {
	doc := rawDoc(t, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: 5}, {Key: "arr", Value: bson.A{bson.D{}}}})
	set := func(p string, v any) bson.D { return bson.D{{Key: "$set", Value: bson.D{{Key: p, Value: v}}}} }
	tests := []struct {
		name   string
		update bson.D
		code   int32 // 0: applied
	}{
		{"180 parts", set(partsPath("p", 180), 1), 0},
		{"181 parts", set(partsPath("p", 181), 1), 15},
		{"179 parts holding {a: 1}", set(partsPath("p", 179), bson.D{{Key: "a", Value: 1}}), 0},
		{"180 parts holding {a: 1}", set(partsPath("p", 180), bson.D{{Key: "a", Value: 1}}), 15},
		{"180 parts holding {}", set(partsPath("p", 180), bson.D{}), 0},
		{"a value of 180 levels at level 1", set("v", nestedValue(180)), 15},
		{"a value of 179 levels at level 1", set("v", nestedValue(179)), 0},
		{"through an array: arr.0 and 178 parts", set("arr.0."+partsPath("p", 178), 1), 0},
		{"through an array: arr.0 and 179 parts", set("arr.0."+partsPath("p", 179), 1), 15},
		{"500,000 parts", set(partsPath("p", 500000), 1), 15},
		{"500,000 parts under a number", set("s."+partsPath("p", 500000), 1), 28},
		{"$unset of 500,000 parts", bson.D{{Key: "$unset", Value: bson.D{{Key: partsPath("p", 500000), Value: 1}}}}, 0},
		{"$rename of a missing field to 500,000 parts", bson.D{{Key: "$rename", Value: bson.D{{Key: "nothing", Value: partsPath("p", 500000)}}}}, 0},
		{"$rename of a field to 500,000 parts", bson.D{{Key: "$rename", Value: bson.D{{Key: "s", Value: partsPath("p", 500000)}}}}, 15},
		{"a replacement of 180 levels", nestedValue(180), 0},
		{"a replacement of 181 levels", nestedValue(181), 15},
	}
	for _, tc := range tests {
		u, err := CompileUpdate(rawDoc(t, tc.update))
		if err != nil {
			t.Fatalf("%s: CompileUpdate: %v", tc.name, err)
		}
		_, _, err = u.Apply(doc)
		if code, msg := errInfo(err); code != tc.code || code == 15 && msg != "Document exceeds maximum nesting depth of 180" {
			t.Errorf("%s: %d %q, want code %d", tc.name, code, msg, tc.code)
		}
		// The upsert base has no field s to rename.
		if tc.code == 15 && tc.update[0].Key != "$rename" {
			if _, err := u.UpsertBase(rawDoc(t, bson.D{{Key: "_id", Value: 2}})); err == nil {
				t.Errorf("%s: the upsert was not refused", tc.name)
			}
		}
	}
}

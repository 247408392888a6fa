package server

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Which write concerns wait for the journal, as on a standalone mongod
// 4.4: j or fsync true-ish, and w: "majority" unless j is given false.
func TestWriteConcernSync(t *testing.T) {
	for _, tc := range []struct {
		wc   bson.D
		sync bool
	}{
		{nil, false},
		{bson.D{{Key: "w", Value: 1}}, false},
		{bson.D{{Key: "w", Value: 0}}, false},
		{bson.D{{Key: "j", Value: true}}, true},
		{bson.D{{Key: "j", Value: 1}}, true},
		{bson.D{{Key: "j", Value: 0.5}}, true},
		{bson.D{{Key: "j", Value: false}}, false},
		{bson.D{{Key: "j", Value: 0}}, false},
		{bson.D{{Key: "fsync", Value: true}}, true},
		{bson.D{{Key: "fsync", Value: 1}, {Key: "j", Value: false}}, true},
		{bson.D{{Key: "w", Value: "majority"}}, true},
		{bson.D{{Key: "w", Value: "majority"}, {Key: "fsync", Value: false}}, true},
		{bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: true}}, true},
		{bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: false}}, false},
		{bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: 0}}, false},
		{bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: false}, {Key: "fsync", Value: true}}, true},
	} {
		cmd := bson.D{{Key: "insert", Value: "c"}}
		if tc.wc != nil {
			cmd = append(cmd, bson.E{Key: "writeConcern", Value: tc.wc})
		}
		body, err := bson.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		wc, err := writeConcernArg(&request{db: "test", body: body})
		if err != nil {
			t.Errorf("writeConcern %v: %v", tc.wc, err)
			continue
		}
		if wc.sync() != tc.sync {
			t.Errorf("writeConcern %v: waits for the journal %v, want %v", tc.wc, wc.sync(), tc.sync)
		}
	}
}

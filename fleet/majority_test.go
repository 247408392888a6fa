package fleet

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/fakemongod"
)

// TestWritesWaitForAMajorityOfAReplicaSet: against a replica set's
// primary, wtd's writes carry w: majority; against a standalone they
// carry none (the server's default).
func TestWritesWaitForAMajorityOfAReplicaSet(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hello    func(addr string) bson.D
		majority bool
	}{
		{"replica set", func(addr string) bson.D {
			return bson.D{{Key: "setName", Value: "rs0"}, {Key: "hosts", Value: bson.A{addr}}, {Key: "primary", Value: addr},
				{Key: "me", Value: addr}, {Key: "setVersion", Value: int32(1)}}
		}, true},
		{"standalone", func(string) bson.D { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fakemongod.Start()
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			srv.SetHello(tc.hello(srv.Addr()))
			var mu sync.Mutex
			var concerns []bson.RawValue
			srv.Handle("listIndexes", func(cmd bson.Raw) bson.D {
				return bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(0)}, {Key: "ns", Value: "wtd." + cmd.Lookup("listIndexes").StringValue()},
					{Key: "firstBatch", Value: bson.A{}}}}, {Key: "ok", Value: 1.0}}
			})
			srv.Handle("createIndexes", func(bson.Raw) bson.D { return bson.D{{Key: "ok", Value: 1.0}} })
			srv.Handle("update", func(cmd bson.Raw) bson.D {
				mu.Lock()
				concerns = append(concerns, cmd.Lookup("writeConcern"))
				mu.Unlock()
				return bson.D{{Key: "n", Value: int32(1)}, {Key: "nModified", Value: int32(0)}, {Key: "ok", Value: 1.0}}
			})
			ctx := context.Background()
			sink, err := Open(ctx, Config{URI: srv.URI(), Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer sink.Close(ctx)
			if sink.Majority != tc.majority {
				t.Errorf("Majority = %v, want %v", sink.Majority, tc.majority)
			}
			d, _ := bson.Marshal(bson.D{{Key: "_id", Value: "x"}})
			var stats Stats
			if err := sink.write(ctx, StepsCollection, []bson.Raw{d}, &stats); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(concerns) != 1 {
				t.Fatalf("%d update commands, want 1", len(concerns))
			}
			w := ""
			if concerns[0].Type == bson.TypeEmbeddedDocument {
				w, _ = concerns[0].Document().Lookup("w").StringValueOK()
			}
			if tc.majority && w != "majority" || !tc.majority && concerns[0].Type != 0 {
				t.Errorf("writeConcern %v, want w: majority only on the replica set", concerns[0])
			}
		})
	}
}

package itest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// slowDocs is the size of the collection whose unindexed count is the
// "slow read" of the ticket tests: a full scan matching every document's
// 200-byte pad against a regular expression takes 300-450 ms alone on the
// 2-core test machine (a plain field comparison scans 150,000 documents in
// 40 ms, too fast to queue).
const slowDocs = 80_000

// loadSlowCollection fills db.coll with n documents {_id, k, pad}.
func loadSlowCollection(t testing.TB, s *server, db, coll string, n int) {
	t.Helper()
	c := s.db(db).Collection(coll)
	pad := strings.Repeat("x", 200)
	const batch = 2000
	for i := 0; i < n; i += batch {
		docs := make([]any, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			docs = append(docs, bson.D{{Key: "_id", Value: j}, {Key: "k", Value: j % 1000}, {Key: "pad", Value: pad}})
		}
		if _, err := c.InsertMany(context.Background(), docs); err != nil {
			t.Fatalf("load %s.%s: %v", db, coll, err)
		}
	}
}

// slowQuery matches no document (pad holds no "y") and costs a regular
// expression run per document.
var slowQuery = bson.D{{Key: "pad", Value: bson.D{{Key: "$regex", Value: "x+y"}}}}

// slowRead runs one full-scan count and returns its duration.
func slowRead(s *server, db, coll string) (time.Duration, error) {
	start := time.Now()
	res := s.client.Database(db).RunCommand(context.Background(), bson.D{{Key: "count", Value: coll}, {Key: "query", Value: slowQuery}})
	if err := res.Err(); err != nil {
		return 0, fmt.Errorf("slow read: %w", err)
	}
	return time.Since(start), nil
}

package fakemongod

import (
	"context"
	"errors"
	"io"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/ftdc"
)

const replayFile = "../ftdc/testdata/8.0.15/PHieu160105+mongodb_replica--metrics.interim"

// TestReplayServerStatus: a client's serverStatus gets the file's samples
// in turn, each the file's serverStatus for that sample, then the first
// again.
func TestReplayServerStatus(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rp, err := s.ReplayServerStatus(replayFile)
	if err != nil {
		t.Fatal(err)
	}
	// The file's own chunk, read here directly.
	r, err := ftdc.Open(replayFile)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var chunk *ftdc.Chunk
	for chunk == nil {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("no chunk")
		}
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := it.(*ftdc.Chunk); ok {
			chunk = c
		}
	}
	if rp.Samples != chunk.Samples || rp.Metrics != len(chunk.Names) {
		t.Fatalf("replay of %d samples of %d metrics, the file has %d of %d", rp.Samples, rp.Metrics, chunk.Samples, len(chunk.Names))
	}
	ctx := context.Background()
	c, err := mongo.Connect(options.Client().ApplyURI(s.URI()).SetDirect(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	uptime := chunk.Lookup("serverStatus.uptimeMillis")
	inserts := chunk.Lookup("serverStatus.opcounters.insert")
	if uptime == nil || inserts == nil {
		t.Fatal("the file lacks serverStatus.uptimeMillis or opcounters.insert")
	}
	for i := range rp.Samples + 2 {
		var got bson.Raw
		if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		s := i % rp.Samples
		if v := got.Lookup("uptimeMillis").AsInt64(); v != uptime[s] {
			t.Fatalf("reply %d: uptimeMillis %d, want sample %d's %d", i, v, s, uptime[s])
		}
		if v := got.Lookup("opcounters", "insert").AsInt64(); v != inserts[s] {
			t.Fatalf("reply %d: opcounters.insert %d, want %d", i, v, inserts[s])
		}
		if h, _ := got.Lookup("host").StringValueOK(); h == "" {
			t.Fatalf("reply %d: no host", i)
		}
	}
}

func TestReplayNotFTDC(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ReplayServerStatus("replay.go"); err == nil {
		t.Fatal("replaying a Go file: no error")
	}
}

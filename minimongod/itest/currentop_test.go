package itest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// slowReadTagged is a slow read whose command carries comment, so
// currentOp can find it.
func slowReadTagged(s *server, comment string) error {
	return s.client.Database("t").RunCommand(context.Background(), bson.D{{Key: "count", Value: "slow"},
		{Key: "query", Value: slowQuery}, {Key: "comment", Value: comment}}).Err()
}

// findOp polls currentOp until an operation with comment satisfies ok.
func findOp(t *testing.T, s *server, comment string, ok func(bson.M) bool) bson.M {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res := s.run(t, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "command.comment", Value: comment}})
		for _, e := range res["inprog"].(bson.A) {
			if op := e.(bson.M); ok(op) {
				return op
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no operation %q in currentOp within 10s", comment)
	return nil
}

func wantInterrupted(t *testing.T, err error) {
	t.Helper()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 11601 || ce.Name != "Interrupted" || ce.Message != "operation was interrupted" {
		t.Fatalf("killed operation ended with %v, want 11601 Interrupted", err)
	}
}

func killOp(t *testing.T, s *server, opid any) {
	t.Helper()
	res := s.run(t, "admin", bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}})
	if res["info"] != "attempting to kill op" {
		t.Errorf("killOp = %v", res)
	}
}

func TestKillOpEndsQueuedOperation(t *testing.T) {
	s := start(t, "--setParameter", "executionControlConcurrentReadTransactions=5")
	// Half the benchmark's collection: each wave of five reads still lasts
	// long enough to find, inspect and kill the queued victim.
	loadSlowCollection(t, s, "t", "slow", slowDocs/2)
	// Eight readers for five tickets keep every ticket busy and a queue in
	// front of the victim, so it always has to wait.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := slowReadTagged(s, "blocker"); err != nil {
					t.Errorf("blocking read: %v", err)
					return
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)
	findOp(t, s, "blocker", func(op bson.M) bool { return op["waitingForLock"] == false })
	victim := make(chan error, 1)
	go func() { victim <- slowReadTagged(s, "victim") }()
	op := findOp(t, s, "victim", func(op bson.M) bool { return op["waitingForTicket"] == true })
	for _, k := range []string{"opid", "active", "secs_running", "microsecs_running", "op", "ns", "command", "client", "waitingForLock"} {
		if _, ok := op[k]; !ok {
			t.Errorf("currentOp entry has no %s: %v", k, op)
		}
	}
	if op["op"] != "command" || op["ns"] != "t.slow" || op["active"] != true || op["waitingForLock"] != true || op["ticketQueue"] != "read" {
		t.Errorf("queued entry = %v", op)
	}
	if cmd, _ := op["command"].(bson.M); cmd["count"] != "slow" {
		t.Errorf("command = %v", op["command"])
	}
	before := must(status(s))(t)
	killOp(t, s, op["opid"])
	select {
	case err := <-victim:
		wantInterrupted(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("killed queued operation still waiting after 5s")
	}
	after := must(status(s))(t)
	if d := num(after, "queues.execution.read.normalPriority.canceled") - num(before, "queues.execution.read.normalPriority.canceled"); d != 1 {
		t.Errorf("canceled +%d, want 1", d)
	}
}

func TestKillOpEndsRunningScan(t *testing.T) {
	s := start(t)
	loadSlowCollection(t, s, "t", "slow", slowDocs)
	done := make(chan error, 1)
	go func() { done <- slowReadTagged(s, "running") }()
	op := findOp(t, s, "running", func(op bson.M) bool { return op["waitingForLock"] == false })
	killOp(t, s, op["opid"])
	select {
	case err := <-done:
		wantInterrupted(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("killed scan still running after 5s")
	}
	// Unknown opids are accepted, as by mongod.
	killOp(t, s, int32(999999))
	if ce := s.runErr(t, "admin", bson.D{{Key: "killOp", Value: 1}}); ce.Code != 4 {
		t.Errorf("killOp without op: %v", ce)
	}
}

func TestCurrentOpListsItselfAndAggregationStage(t *testing.T) {
	t.Parallel()
	s := start(t)
	res := s.run(t, "admin", bson.D{{Key: "currentOp", Value: 1}})
	inprog := res["inprog"].(bson.A)
	if len(inprog) != 1 || inprog[0].(bson.M)["command"].(bson.M)["currentOp"] == nil {
		t.Errorf("currentOp = %v, want itself", res)
	}
	all := s.run(t, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "$all", Value: true}})
	if len(all["inprog"].(bson.A)) < len(inprog) {
		t.Errorf("currentOp $all = %v", all)
	}
	cur, err := s.db("admin").Aggregate(ctx, bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "op", Value: "command"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	for cur.Next(ctx) {
		docs = append(docs, toM(t, cur.Current))
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0]["command"].(bson.M)["aggregate"] == nil {
		t.Errorf("$currentOp = %v", docs)
	}
	if ce := s.runErr(t, "t", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}}}},
		{Key: "cursor", Value: bson.D{}}}); ce.Code != 73 {
		t.Errorf("$currentOp outside admin: %v", ce)
	}
}

package itest

import (
	"bytes"
	"context"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// field returns the value at a dotted path of nested bson.M documents.
func field(m bson.M, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		d, ok := v.(bson.M)
		if !ok {
			return nil
		}
		v = d[k]
	}
	return v
}

// num returns the number at path as an int64 (-1 when missing).
func num(m bson.M, path string) int64 {
	switch n := field(m, path).(type) {
	case int32:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}

// status returns serverStatus without the WiredTiger statistics.
func status(s *server) (bson.M, error) {
	raw, err := s.client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "serverStatus", Value: 1}, {Key: "wiredTiger", Value: 0}}).Raw()
	if err != nil {
		return nil, err
	}
	return decodeM(raw)
}

// decodeM decodes raw with nested documents as bson.M, for goroutines
// that cannot fail the test.
func decodeM(raw bson.Raw) (bson.M, error) {
	dec := bson.NewDecoder(bson.NewDocumentReader(bytes.NewReader(raw)))
	dec.DefaultDocumentM()
	var out bson.M
	err := dec.Decode(&out)
	return out, err
}

// slowReadRun is what one round of concurrent slow reads measured.
type slowReadRun struct {
	durations         []time.Duration // per read, sorted
	total             time.Duration
	outMax, queueMax  int64
	addedToQueue      int64 // delta
	queuedMicros      int64 // delta of totalTimeQueuedMicros
	concurrentTxnsMax int64 // wiredTiger.concurrentTransactions.read.out, sampled
}

func (r slowReadRun) median() time.Duration { return r.durations[len(r.durations)/2] }

// meanQueued is the mean queued time of the reads that queued.
func (r slowReadRun) meanQueued() time.Duration {
	if r.addedToQueue == 0 {
		return 0
	}
	return time.Duration(r.queuedMicros/r.addedToQueue) * time.Microsecond
}

// runSlowReads runs n slow reads at once while sampling the read queue
// every 10 ms.
func runSlowReads(t testing.TB, s *server, n int) slowReadRun {
	t.Helper()
	before, err := status(s)
	if err != nil {
		t.Fatal(err)
	}
	var run slowReadRun
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		sampleQueue(s, stop, &run)
	}()
	durations := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			durations[i], errs[i] = slowRead(s, "t", "slow")
		}()
	}
	wg.Wait()
	run.total = time.Since(start)
	close(stop)
	sampler.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	after, err := status(s)
	if err != nil {
		t.Fatal(err)
	}
	const np = "queues.execution.read.normalPriority."
	run.addedToQueue = num(after, np+"addedToQueue") - num(before, np+"addedToQueue")
	run.queuedMicros = num(after, np+"totalTimeQueuedMicros") - num(before, np+"totalTimeQueuedMicros")
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	run.durations = durations
	return run
}

func sampleQueue(s *server, stop chan struct{}, run *slowReadRun) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
		raw, err := s.client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			continue
		}
		st, err := decodeM(raw)
		if err != nil {
			continue
		}
		run.outMax = max(run.outMax, num(st, "queues.execution.read.out"))
		run.queueMax = max(run.queueMax, num(st, "queues.execution.read.normalPriority.queueLength"))
		run.concurrentTxnsMax = max(run.concurrentTxnsMax, num(st, "wiredTiger.concurrentTransactions.read.out"))
	}
}

func setParam(t testing.TB, s *server, name string, v any) bson.M {
	t.Helper()
	return s.run(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: v}})
}

func TestReadTicketsQueueSlowReads(t *testing.T) {
	s := start(t, "--setParameter", "executionControlConcurrentReadTransactions=5")
	// A quarter of the benchmark's collection: the reads must overlap, not
	// be long; 16 of them at once still queue behind 5 tickets.
	loadSlowCollection(t, s, "t", "slow", slowDocs/4)
	alone, err := slowRead(s, "t", "slow")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one slow read alone: %v", alone)

	run := runSlowReads(t, s, 16)
	t.Logf("5 tickets: total %v, median %v, out max %d, queue max %d, queued %d, mean queued %v",
		run.total, run.median(), run.outMax, run.queueMax, run.addedToQueue, run.meanQueued())
	if run.outMax > 5 || run.concurrentTxnsMax > 5 {
		t.Errorf("out reached %d (concurrentTransactions %d), limit 5", run.outMax, run.concurrentTxnsMax)
	}
	if run.outMax < 5 {
		t.Errorf("out max %d, want the 5 tickets in use", run.outMax)
	}
	if run.queueMax <= 0 || run.addedToQueue < 11 || run.queuedMicros <= 0 {
		t.Errorf("queue max %d, addedToQueue +%d, totalTimeQueuedMicros +%d: want queueing", run.queueMax, run.addedToQueue, run.queuedMicros)
	}

	setParam(t, s, "executionControlConcurrentReadTransactions", 128)
	run = runSlowReads(t, s, 16)
	t.Logf("128 tickets: total %v, median %v, out max %d, queue max %d", run.total, run.median(), run.outMax, run.queueMax)
	if run.queueMax != 0 || run.addedToQueue != 0 {
		t.Errorf("128 tickets: queue max %d, addedToQueue +%d, want no queueing", run.queueMax, run.addedToQueue)
	}
	if run.outMax <= 5 {
		t.Errorf("128 tickets: out max %d, want more than 5 reads at once", run.outMax)
	}
}

func TestTicketParameters(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "storageEngineConcurrentWriteTransactions=20")
	gp := s.run(t, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "wiredTigerConcurrentWriteTransactions", Value: 1},
		{Key: "executionControlConcurrentReadTransactions", Value: 1}, {Key: "storageEngineConcurrencyAdjustmentAlgorithm", Value: 1}})
	if gp["wiredTigerConcurrentWriteTransactions"] != int32(20) || gp["executionControlConcurrentReadTransactions"] != int32(128) ||
		gp["storageEngineConcurrencyAdjustmentAlgorithm"] != "fixedConcurrentTransactions" {
		t.Errorf("getParameter = %v", gp)
	}
	all := s.run(t, "admin", bson.D{{Key: "getParameter", Value: "*"}})
	for _, name := range []string{"executionControlConcurrentReadTransactions", "executionControlConcurrentWriteTransactions",
		"executionControlConcurrencyAdjustmentAlgorithm", "executionControlConcurrencyAdjustmentIntervalMillis"} {
		if _, ok := all[name]; !ok {
			t.Errorf("getParameter '*' has no %s", name)
		}
	}
	if _, ok := all["wiredTigerConcurrentReadTransactions"]; ok {
		t.Error("getParameter '*' lists an alias")
	}
	for _, tc := range []struct {
		name string
		v    any
		msg  string
	}{
		{"executionControlConcurrentReadTransactions", 4, "Concurrent read transactions limit must be greater than or equal to 5."},
		{"wiredTigerConcurrentReadTransactions", 4, "Concurrent read transactions limit must be greater than or equal to 5."},
		{"storageEngineConcurrentWriteTransactions", 0, "Concurrent write transactions limit must be greater than or equal to 5."},
		{"executionControlConcurrencyAdjustmentAlgorithm", "fast", "Enumeration value 'fast' for field 'executionControlConcurrencyAdjustmentAlgorithm' is not a valid value."},
		{"executionControlConcurrencyAdjustmentIntervalMillis", 0, "Invalid value for parameter executionControlConcurrencyAdjustmentIntervalMillis: 0 is not greater than 0"},
		{"ttlMonitorSleepSecs", 0, "Invalid value for parameter ttlMonitorSleepSecs: 0 is not greater than 0"},
	} {
		ce := s.runErr(t, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: tc.name, Value: tc.v}})
		if ce.Code != 2 || ce.Name != "BadValue" || ce.Message != tc.msg {
			t.Errorf("set %s=%v: %d %s %q, want 2 BadValue %q", tc.name, tc.v, ce.Code, ce.Name, ce.Message, tc.msg)
		}
	}
	was := setParam(t, s, "wiredTigerConcurrentReadTransactions", 5)
	if was["was"] != int32(128) {
		t.Errorf("setParameter was = %v", was)
	}
	raw, err := s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	st := toM(t, raw)
	for path, want := range map[string]int64{
		"wiredTiger.concurrentTransactions.read.totalTickets":  5,
		"wiredTiger.concurrentTransactions.write.totalTickets": 20,
		"queues.execution.read.totalTickets":                   5,
		"queues.execution.read.available":                      5,
		"queues.execution.read.normalPriority.queueLength":     0,
		"queues.execution.write.out":                           0,
		"globalLock.currentQueue.readers":                      0,
		"globalLock.activeClients.writers":                     0,
	} {
		if got := num(st, path); got != want {
			t.Errorf("%s = %d, want %d", path, got, want)
		}
	}
	for _, k := range []string{"addedToQueue", "removedFromQueue", "queueLength", "startedProcessing", "processing",
		"finishedProcessing", "totalTimeProcessingMicros", "canceled", "newAdmissions", "totalTimeQueuedMicros"} {
		if field(st, "queues.execution.write.normalPriority."+k) == nil {
			t.Errorf("queues.execution.write.normalPriority has no %s", k)
		}
	}
	// At startup a refused value stops the server, as mongod.
	out, err := exec.Command(mmBinary, "--port", "1", "--dbpath", t.TempDir(), "--setParameter", "wiredTigerConcurrentReadTransactions=4").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Concurrent read transactions limit must be greater than or equal to 5.") {
		t.Errorf("startup with 4 read tickets: %v\n%s", err, out)
	}
}

func TestThroughputProbingChangesTickets(t *testing.T) {
	s := start(t, "--setParameter", "executionControlConcurrencyAdjustmentAlgorithm=throughputProbing",
		"--setParameter", "executionControlConcurrencyAdjustmentIntervalMillis=100")
	loadSlowCollection(t, s, "t", "slow", slowDocs/4)
	st, err := status(s)
	if err != nil {
		t.Fatal(err)
	}
	initial := num(st, "queues.execution.read.totalTickets")
	if initial < 5 || initial >= 128 {
		t.Fatalf("throughputProbing starts at %d read tickets, want low (>= 5)", initial)
	}
	seen := map[int64]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := slowRead(s, "t", "slow"); err != nil {
					t.Errorf("slow read: %v", err)
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) && len(seen) < 2 {
		if st, err := status(s); err == nil {
			seen[num(st, "queues.execution.read.totalTickets")] = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("read totalTickets seen under load: %v (start %d)", seen, initial)
	if len(seen) < 2 {
		t.Errorf("totalTickets stayed %v under sustained load", seen)
	}
	st = must(status(s))(t)
	if field(st, "queues.execution.monitor") == nil {
		t.Error("serverStatus has no queues.execution.monitor")
	}
	setParam(t, s, "executionControlConcurrencyAdjustmentAlgorithm", "fixedConcurrentTransactions")
	st = must(status(s))(t)
	if got := num(st, "queues.execution.read.totalTickets"); got != 128 {
		t.Errorf("after switching to fixed: %d read tickets, want 128", got)
	}
}

package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/fleet"
	"wtd/internal/fakemongod"
	"wtd/internal/testbin"
)

// hostPlaybook is a host's small run: a load and a short workload.
const hostPlaybook = `
local p = params{ docs = 1000, seconds = 2 }
local m = mongod.start{ cacheSizeGB = 0.25 }
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 200 } end }
step{ name = "reads", run = function() return m:workload{ ns = "t.c", duration = p.seconds, mix = { read = 1 } } end }
`

// twoHosts records a run on each of two "hosts": two results databases
// (each with its state directory), so two host ids.
func twoHosts(t *testing.T) []*store.Store {
	t.Helper()
	ctx := context.Background()
	var out []*store.Store
	for i := range 2 {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("host%d", i+1))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		db := testbin.RecordRuns(t, dir, hostPlaybook, nil)
		st, err := store.OpenExisting(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(context.Background()) })
		out = append(out, st)
	}
	return out
}

func count(t *testing.T, sink *fleet.Sink, coll string, filter bson.D) int64 {
	t.Helper()
	n, err := sink.Database().Collection(coll).CountDocuments(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var cmpSamples = cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
})}

// centralSamples decodes one source's samples of run uuid from the
// results store's frames and metric names.
func centralSamples(t *testing.T, sink *fleet.Sink, uuid, source string) []store.Sample {
	t.Helper()
	ctx := context.Background()
	var run struct {
		Metrics string `bson:"metrics"`
	}
	if err := sink.Database().Collection(fleet.RunsCollection).FindOne(ctx, bson.D{{Key: "_id", Value: uuid}}).Decode(&run); err != nil {
		t.Fatal(err)
	}
	var names struct {
		IDs   []int64  `bson:"ids"`
		Names []string `bson:"names"`
	}
	if err := sink.Database().Collection(fleet.MetricsCollection).FindOne(ctx, bson.D{{Key: "_id", Value: run.Metrics}}).Decode(&names); err != nil {
		t.Fatal(err)
	}
	m := map[int64]string{}
	for i, id := range names.IDs {
		m[id] = names.Names[i]
	}
	cur, err := sink.Database().Collection(fleet.FramesCollection).Find(ctx, bson.D{{Key: "run", Value: uuid}, {Key: "source", Value: source}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		TS       int64       `bson:"ts"`
		Keyframe bool        `bson:"keyframe"`
		Samples  int         `bson:"samples"`
		Data     bson.Binary `bson:"data"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	var frames []store.Frame
	for _, d := range docs {
		frames = append(frames, store.Frame{Source: source, TS: d.TS, Keyframe: d.Keyframe, Samples: d.Samples, Data: d.Data.Data})
	}
	// The frames' order is their time order.
	for i := 1; i < len(frames); i++ {
		for j := i; j > 0 && frames[j].TS < frames[j-1].TS; j-- {
			frames[j], frames[j-1] = frames[j-1], frames[j]
		}
	}
	got, err := store.DecodeFrames(frames, m)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestTwoHostsPushToOneResultsStore: two hosts' runs pushed to one
// minimongod are there with their steps, output and samples (decoded
// from the pushed frames, equal to each host's own), under distinct host
// ids; a push repeated sends no frame again and makes no new document.
func TestTwoHostsPushToOneResultsStore(t *testing.T) {
	twoHostsPushTo(t, testbin.StartMinimongod(t, 0).URI)
}

// TestTwoHostsPushToFerretDB: the same on FerretDB (its SQLite backend), a
// MongoDB-compatible server this project did not write.
func TestTwoHostsPushToFerretDB(t *testing.T) {
	uri := testbin.StartFerretDB(t)
	twoHostsPushTo(t, uri)
}

// twoHostsPushTo pushes the runs of two hosts to the results store at uri
// and checks what it holds, and that a push repeated writes nothing.
func twoHostsPushTo(t *testing.T, uri string) {
	ctx := context.Background()
	hosts := twoHosts(t)
	cfg := fleet.Config{URI: uri, Database: "fleet"}
	var first []fleet.Stats
	for _, st := range hosts {
		p := &fleet.Pusher{Config: cfg, Store: st}
		res, err := p.PushRuns(ctx, []int64{1})
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("push: %+v %v", res, err)
		}
		first = append(first, res[0].Stats)
		ps, err := st.Pushes(ctx, 1)
		if err != nil || ps[1].Waiting() {
			t.Fatalf("outbox after the push: %+v (%v), want run 1 acknowledged", ps, err)
		}
	}
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close(ctx)
	runs, err := sink.List(ctx, fleet.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].HostID == runs[1].HostID {
		t.Fatalf("results store lists %+v, want two runs of two hosts", runs)
	}
	for i, st := range hosts {
		hostID, err := st.HostID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		list, err := sink.List(ctx, fleet.Filter{Host: hostID, Playbook: "playbook"})
		if err != nil || len(list) != 1 {
			t.Fatalf("host %s: %+v (%v), want its one run", hostID, list, err)
		}
		r := list[0]
		local, err := st.GetRun(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Key != hostID+":1" || r.Run.ID != 1 || r.Run.Status != "ok" || !r.Run.StartedAt.Equal(local.StartedAt.UTC()) || r.Steps != 2 {
			t.Errorf("host %d's run in the results store: %+v", i+1, r)
		}
		if n := count(t, sink, fleet.StepsCollection, bson.D{{Key: "run", Value: r.UUID}, {Key: "provenance", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 2 {
			t.Errorf("host %d: %d steps with provenance, want 2", i+1, n)
		}
		var step struct {
			Name   string `bson:"name"`
			Result bson.D `bson:"result"`
		}
		if err := sink.Database().Collection(fleet.StepsCollection).FindOne(ctx, bson.D{{Key: "run", Value: r.UUID}, {Key: "seq", Value: 2}}).Decode(&step); err != nil {
			t.Fatal(err)
		}
		if step.Name != "reads" || len(step.Result) == 0 {
			t.Errorf("host %d's step 2: %+v, want reads with its result", i+1, step)
		}
		sources, err := st.SampleSources(ctx, 1)
		if err != nil || len(sources) < 2 {
			t.Fatalf("sources %v (%v)", sources, err)
		}
		for _, src := range sources {
			want, err := st.Samples(ctx, 1, src, time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			got := centralSamples(t, sink, r.UUID, src)
			if len(want) == 0 || !cmp.Equal(want, got, cmpSamples) {
				t.Errorf("host %d, %s: %d samples in the results store, %d on the host, or they differ", i+1, src, len(got), len(want))
			}
		}
		// Read back, the run is the view its host shows.
		found, err := sink.Find(ctx, hostID+":1")
		if err != nil || found.UUID != r.UUID {
			t.Fatalf("Find %s:1: %+v, %v", hostID, found, err)
		}
		if byUUID, err := sink.Find(ctx, r.UUID); err != nil || byUUID.Key != r.Key {
			t.Errorf("Find %s: %+v, %v", r.UUID, byUUID, err)
		}
		central, err := sink.View(ctx, found)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := record.Load(ctx, st, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := rec.View()
		want.Run.Push = nil
		if d := cmp.Diff(asJSON(t, want), asJSON(t, central)); d != "" {
			t.Errorf("host %d's run read back from the results store (-host +store):\n%s", i+1, d)
		}
		if first[i].Inserted != first[i].Docs || first[i].Frames == 0 {
			t.Errorf("host %d's first push: %+v, want every document new", i+1, first[i])
		}
		t.Logf("host %d: run 1 pushed: %d documents, %d frames, %d bytes", i+1, first[i].Docs, first[i].Frames, first[i].Bytes)
	}
	before := map[string]int64{}
	for _, c := range []string{fleet.RunsCollection, fleet.StepsCollection, fleet.EventsCollection, fleet.FramesCollection, fleet.MetricsCollection} {
		before[c] = count(t, sink, c, bson.D{})
	}
	for i, st := range hosts {
		p := &fleet.Pusher{Config: cfg, Store: st}
		res, err := p.PushRuns(ctx, []int64{1})
		if err != nil || res[0].Err != nil {
			t.Fatalf("push again: %+v %v", res, err)
		}
		if s := res[0].Stats; s.Inserted != 0 || s.Skipped != s.Frames || s.Frames != first[i].Frames {
			t.Errorf("host %d pushed again: %+v, want nothing new and every frame skipped", i+1, s)
		}
	}
	for c, n := range before {
		if got := count(t, sink, c, bson.D{}); got != n {
			t.Errorf("%s: %d documents after pushing again, %d before", c, got, n)
		}
	}
}

// TestResultsStoreStoppedDuringAPush: the results server stops when the
// push has written a run's frames but not its steps; the run stays in
// the outbox with the error and a retry after the backoff; with the
// server back (same data), the next push sends only what is missing and
// the store holds every document once.
func TestResultsStoreStoppedDuringAPush(t *testing.T) {
	ctx := context.Background()
	st := twoHosts(t)[0]
	data := t.TempDir()
	results := testbin.StartMinimongod(t, 0, "--dbpath", data)
	stop := func() {
		results.Cmd.Process.Signal(syscall.SIGTERM)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && syscall.Kill(results.Cmd.Process.Pid, 0) == nil {
			time.Sleep(20 * time.Millisecond) // gone once testbin's Wait reaped it
		}
	}
	hostID, err := st.HostID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	local, err := st.GetRun(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	uuid := fleet.RunUUID(hostID, 1, local.StartedAt)
	proxy := fakemongod.StartCutProxy(t, fmt.Sprintf("127.0.0.1:%d", results.Port), []byte(uuid+"/step/1"), stop)
	cfg := fleet.Config{URI: "mongodb://" + proxy.Addr(), Database: "fleet", Timeout: 2 * time.Second}
	p := &fleet.Pusher{Config: cfg, Store: st, RetryFirst: time.Minute}
	start := time.Now()
	res, err := p.PushRuns(ctx, []int64{1})
	if err != nil || len(res) != 1 || res[0].Err == nil {
		t.Fatalf("push through a server that stops: %+v %v, want the run's push to fail", res, err)
	}
	cutStats := res[0].Stats
	ps, err := st.Pushes(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := ps[1]; !w.Waiting() || w.Attempts != 1 || w.LastError == "" || w.NextAt.Before(start.Add(time.Minute)) {
		t.Fatalf("outbox after the cut: %+v, want run 1 waiting, one attempt, its error, the next in a minute", w)
	}
	if due, err := st.PushesDue(ctx, time.Now()); err != nil || len(due) != 0 {
		t.Fatalf("due right after the failure: %+v (%v), want none before the backoff", due, err)
	}
	if cutStats.Docs == 0 || cutStats.Frames == 0 {
		t.Fatalf("stats of the cut push: %+v, want its frames written before the cut", cutStats)
	}
	// The server comes back on its port with its data.
	back := testbin.StartMinimongod(t, results.Port, "--dbpath", data)
	p.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	res, err = p.PushDue(ctx)
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("the next push: %+v %v", res, err)
	}
	if s := res[0].Stats; s.Skipped != cutStats.Frames || s.Inserted == 0 {
		t.Errorf("the next push: %+v, want the %d frames written before the cut skipped and the rest new", s, cutStats.Frames)
	}
	ps, err = st.Pushes(ctx, 1)
	if err != nil || ps[1].Waiting() {
		t.Fatalf("outbox after the next push: %+v (%v)", ps, err)
	}
	sink, err := fleet.Open(ctx, fleet.Config{URI: back.URI, Database: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close(ctx)
	view, err := st.Steps(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for coll, want := range map[string]int64{fleet.RunsCollection: 1, fleet.StepsCollection: int64(len(view)), fleet.FramesCollection: int64(cutStats.Frames), fleet.MetricsCollection: 1} {
		if n := count(t, sink, coll, bson.D{}); n != want {
			t.Errorf("%s: %d documents, want %d", coll, n, want)
		}
	}
}

// asJSON is v as its JSON decodes: maps, slices, float64s.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

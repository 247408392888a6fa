package workload

import (
	"context"
	"math"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/testbin"
)

// TestRateScheduleTimes: operation i is due at i/rate within its step, the
// steps follow each other, and count inverts at.
func TestRateScheduleTimes(t *testing.T) {
	c := newRateSchedule([]float64{1000}, 0)
	if got := c.at(2500); got != 2500*time.Millisecond {
		t.Errorf("constant 1000/s: op 2500 at %v", got)
	}
	s := newRateSchedule([]float64{100, 400, 50}, time.Second)
	for _, tc := range []struct {
		i    int64
		want time.Duration
	}{{0, 0}, {99, 990 * time.Millisecond}, {100, time.Second}, {101, time.Second + 2500*time.Microsecond},
		{500, 2 * time.Second}, {550, 3 * time.Second}, {600, 4 * time.Second}} {
		if got := s.at(tc.i); got != tc.want {
			t.Errorf("schedule 100, 400, 50: op %d at %v, want %v", tc.i, got, tc.want)
		}
	}
	for _, sc := range []*rateSchedule{c, s} {
		for i := int64(0); i < 700; i += 7 {
			at := sc.at(i)
			if n := sc.count(at); n != i {
				t.Fatalf("%v: count(at(%d) = %v) = %d, want %d due before it", sc.rates, i, at, n, i)
			}
			if n := sc.count(at + time.Nanosecond); n != i+1 {
				t.Fatalf("%v: count just after op %d = %d", sc.rates, i, n)
			}
		}
	}
}

// startLoadedServer starts a server with docs documents of 256 bytes in
// ns and returns a client of it and the server.
func startLoadedServer(t *testing.T, ns string, docs int64) (*mongo.Client, *testbin.Server) {
	t.Helper()
	client, srv := startTestServer(t)
	if _, err := Load(context.Background(), client, LoadSpec{NS: ns, Docs: docs, DocBytes: 256}, Hooks{}); err != nil {
		t.Fatal(err)
	}
	return client, srv
}

// runOwnClient runs spec as engine's Server.Workload does: on a client of
// its own, with a connection per thread and no retries, whose connections
// the Abort hook closes (so the operations' contexts have no Done
// channel).
func runOwnClient(t *testing.T, uri string, spec Spec, h Hooks) (Result, error) {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI(uri + "/?directConnection=true").
		SetMaxPoolSize(uint64(max(spec.Threads, 1) + 1)).SetRetryReads(false).SetRetryWrites(false))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	h.Abort = func() {
		closed, cancel := context.WithCancel(context.Background())
		cancel()
		_ = client.Disconnect(closed)
	}
	return Run(context.Background(), client, spec, h)
}

// freezer stops a server's process (SIGSTOP) for a while once a workload
// has got somewhere: its progress method, given to the workload, does it
// the first time ready(done) holds, and a timer lets the process go on
// (SIGCONT) `for_` later. The process goes on at the test's end in any
// case.
type freezer struct {
	pid   int
	for_  time.Duration
	ready func(done int64) bool
	start time.Time // when the workload was started, for the log

	mu    sync.Mutex
	began time.Time // when the process was stopped; zero before
	timer *time.Timer
}

func newFreezer(t *testing.T, pid int, for_ time.Duration, ready func(done int64) bool) *freezer {
	f := &freezer{pid: pid, for_: for_, ready: ready, start: time.Now()}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.timer != nil {
			f.timer.Stop()
		}
		syscall.Kill(f.pid, syscall.SIGCONT)
	})
	return f
}

func (f *freezer) progress(done, _ int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.began.IsZero() || !f.ready(done) {
		return
	}
	f.began = time.Now()
	syscall.Kill(f.pid, syscall.SIGSTOP)
	f.timer = time.AfterFunc(f.for_, func() { syscall.Kill(f.pid, syscall.SIGCONT) })
}

// frozeAt returns when the freeze began after the workload's start, or
// fails the test if it never did.
func (f *freezer) frozeAt(t *testing.T) time.Duration {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.began.IsZero() {
		t.Fatal("the server was never frozen")
	}
	return f.began.Sub(f.start)
}

// TestRateKeepsTarget: at a rate the server serves easily, the run
// achieves it within 2%, every second of the series holds about a
// second's worth, and the corrected latencies are close to the service
// times. The rate is low enough (200/s over 4 threads: each thread has
// 20 ms for an operation) that a busy machine's stalls hold back few
// operations; they still move some from one second to the next.
func TestRateKeepsTarget(t *testing.T) {
	client := testLoaded(t, 1000, 256)
	const rate, secs = 200, 3
	spec := Spec{NS: "bench.w", Duration: secs * time.Second, Threads: 4, Mix: Mix{Read: 1}, KeySpace: 1000, Rate: rate}
	res, err := Run(context.Background(), client, spec, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rate
	if r == nil || res.Behind {
		t.Fatalf("rate %+v behind %v", r, res.Behind)
	}
	t.Logf("target %.1f/s, achieved %.1f/s, %d late (p99 %.0f µs), missed %d; elapsed %v; p99 %.0f µs, service p99 %.0f µs",
		r.TargetOpsPerSec, r.AchievedOpsPerSec, r.Late, r.LateP99Micros, r.Missed, res.Elapsed, res.Total.P99Micros, res.Total.Service.P99Micros)
	for name, v := range map[string]float64{"target": r.TargetOpsPerSec, "achieved": r.AchievedOpsPerSec} {
		if math.Abs(v/rate-1) > 0.02 {
			t.Errorf("%s %.1f/s, want within 2%% of %d", name, v, rate)
		}
	}
	n := res.Total.Count
	if n < secs*rate-2 || n > secs*rate+1 {
		t.Errorf("%d operations in %d s at %d/s", n, secs, rate)
	}
	// Over the wall time, the last operations' included: those due before
	// the end may start up to the drain's grace after it.
	w := &workloadRun{spec: spec}
	if el := res.Elapsed; el < spec.Duration-10*time.Millisecond || el > spec.Duration+w.drainGrace()+500*time.Millisecond {
		t.Errorf("elapsed %v, want the %v asked for and at most the drain after it", el, spec.Duration)
	}
	if got := res.Total.OpsPerSec * res.Elapsed.Seconds(); math.Abs(got-float64(n)) > 0.01 {
		t.Errorf("ops/s %.1f over %v is %.2f operations, not the %d counted", res.Total.OpsPerSec, res.Elapsed, got, n)
	}
	var inSeries int64
	for _, p := range res.Series {
		inSeries += p.Counts[OpRead]
	}
	if len(res.Series) < secs || len(res.Series) > secs+1 || inSeries != n {
		t.Fatalf("%d seconds in the series holding %d reads; want %d (and the drain's) holding the %d counted", len(res.Series), inSeries, secs, n)
	}
	for i, p := range res.Series[:secs] {
		if c := p.Counts[OpRead]; p.Second != i || c < rate*3/4 || c > rate*5/4 {
			t.Errorf("second %d (point %d): %d reads, want about %d", p.Second, i, c, rate)
		}
	}
	if r.Missed > 0 {
		t.Errorf("%d missed", r.Missed)
	}
	// Nothing held the threads back for long: the corrected median is the
	// service time's (both from the send, the timer's slack being lateness
	// only), within what a busy machine's stalls add to a few operations.
	s, c := res.Ops[OpRead].Service, res.Ops[OpRead]
	// (Under -race on a machine at load 8 a third of the operations may be
	// held back by a few ms: 1.5x and 2 ms hold there.)
	if s == nil || s.P50Micros <= 0 || c.P50Micros < s.P50Micros || c.P50Micros > 1.5*s.P50Micros+2000 {
		t.Errorf("service %+v beside corrected p50 %.0f", s, c.P50Micros)
	}
}

// TestRateBehind: a rate far beyond what one thread can do is reported as
// not kept, with the operations it missed.
func TestRateBehind(t *testing.T) {
	client := testLoaded(t, 1000, 256)
	res, err := Run(context.Background(), client, Spec{NS: "bench.w", Duration: time.Second, Threads: 1,
		Mix: Mix{Read: 1}, KeySpace: 1000, Rate: 1_000_000}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Behind || res.Rate.Missed < 500_000 || res.Rate.AchievedOpsPerSec > 0.5*res.Rate.TargetOpsPerSec {
		t.Errorf("1,000,000/s from one thread: behind %v, rate %+v", res.Behind, res.Rate)
	}
	// The thread stops once what is due is later than the drain's grace
	// (0.2 s); a stall of the machine may delay it a little more.
	if res.Elapsed > 1700*time.Millisecond {
		t.Errorf("a run behind its rate took %v: the backlog must not outlast the duration", res.Elapsed)
	}
}

// TestRateScheduleSteps: a schedule of rates steps every rate_step, and
// lasts its steps without another bound.
func TestRateScheduleSteps(t *testing.T) {
	client := testLoaded(t, 1000, 256)
	res, err := Run(context.Background(), client, Spec{NS: "bench.w", Threads: 2, Mix: Mix{Read: 1}, KeySpace: 1000,
		RateSchedule: []float64{200, 600}, RateStep: time.Second}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total.Count < 790 || res.Total.Count > 801 || res.Behind {
		t.Errorf("200/s then 600/s for a second each: %d operations, behind %v", res.Total.Count, res.Behind)
	}
	// A stall of the machine moves some operations into the next second.
	if c := res.Series[0].Counts[OpRead]; c < 150 || c > 250 {
		t.Errorf("second 0: %d reads, want about 200", c)
	}
	// The second rate holds from second 1 on; on a starved machine part of
	// it drains into the next second.
	rest := int64(0)
	for _, p := range res.Series[1:] {
		rest += p.Counts[OpRead]
	}
	if c := res.Series[1].Counts[OpRead]; c < 300 || c > 750 || rest < 540 || rest > 651 {
		t.Errorf("second 1: %d reads (%d from second 1 on), want about 600", c, rest)
	}
	if math.Abs(res.Rate.TargetOpsPerSec-400) > 12 {
		t.Errorf("target %.1f/s, want the mean, 400", res.Rate.TargetOpsPerSec)
	}
}

// TestCoordinatedOmissionSIGSTOP is the proof of the corrected latencies:
// the server is frozen (SIGSTOP) for one second in the middle of a 10 s
// run at a fixed rate. Measured from each operation's scheduled start, the
// p99 shows the stall; the service times from the actual send, which is
// what a closed loop measures, hardly do.
func TestCoordinatedOmissionSIGSTOP(t *testing.T) {
	_, srv := startLoadedServer(t, "co.c", 2000)
	// Frozen once 2000 operations (4 s' worth) are done.
	f := newFreezer(t, srv.Cmd.Process.Pid, time.Second, func(done int64) bool { return done >= 2000 })
	res, err := runOwnClient(t, srv.URI, Spec{NS: "co.c", Duration: 10 * time.Second, Threads: 4, Mix: Mix{Read: 1},
		KeySpace: 2000, Rate: 500}, Hooks{Progress: f.progress})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Total
	t.Logf("frozen at %v; corrected p50 %.0f µs p99 %.0f µs max %.0f µs; service p50 %.0f µs p99 %.0f µs max %.0f µs; rate %+v", f.frozeAt(t),
		tot.P50Micros, tot.P99Micros, tot.MaxMicros, tot.Service.P50Micros, tot.Service.P99Micros, tot.Service.MaxMicros, *res.Rate)
	if tot.P99Micros < 500_000 {
		t.Errorf("corrected p99 %.0f µs: the 1 s stall must show (>= 500 ms)", tot.P99Micros)
	}
	if tot.MaxMicros < 900_000 {
		t.Errorf("corrected max %.0f µs, want about the 1 s stall", tot.MaxMicros)
	}
	// Only the few operations in flight during the stall wait for it (1 in
	// 1000); a busy machine slows others by tens of milliseconds.
	if tot.Service.P99Micros > 250_000 {
		t.Errorf("service p99 %.0f µs: only the few operations in flight during the stall should be slow", tot.Service.P99Micros)
	}
	if res.Behind || res.Rate.Late < 300 {
		t.Errorf("behind %v with %d late: the operations due in the stall start late, and the run catches up", res.Behind, res.Rate.Late)
	}
}

// TestWarmupExcluded: operations in a warm-up are in the series and not
// in the summary. A stall in the warm-up shows in its second's p99 but not
// in the summary's; the measured part has the duration asked for. The
// stall (600 ms) begins once operations are done, early in a warm-up of
// 2 s at a rate low enough to catch up long before its end.
func TestWarmupExcluded(t *testing.T) {
	client, srv := startLoadedServer(t, "wu.c", 1000)
	const rate, stall = 200, 600 * time.Millisecond
	spec := Spec{NS: "wu.c", Duration: 1500 * time.Millisecond, Warmup: 2 * time.Second, Threads: 2,
		Mix: Mix{Read: 1}, KeySpace: 1000, Rate: rate}
	f := newFreezer(t, srv.Cmd.Process.Pid, stall, func(done int64) bool { return done > 0 })
	res, err := runOwnClient(t, srv.URI, spec, Hooks{Progress: f.progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("frozen at %v for %v; warm-up %+v; summary p99 %.0f µs max %.0f µs", f.frozeAt(t), stall, res.Warmup, res.Total.P99Micros, res.Total.MaxMicros)
	var seriesOps int64
	var warmP99 float64
	for _, p := range res.Series {
		seriesOps += p.Counts[OpRead]
		if p.Warmup {
			warmP99 = max(warmP99, p.P99Micros[OpRead])
		}
	}
	w, warmOps, ops := res.Warmup, int64(rate*2), int64(rate*3/2)
	if w == nil || w.Ops < warmOps*9/10 || w.Ops > warmOps || res.Total.Count+w.Ops != seriesOps {
		t.Fatalf("warm-up %+v, %d measured, %d in the series: want the warm-up's %d and the series to hold both", w, res.Total.Count, seriesOps, warmOps)
	}
	if n := res.Total.Count; n < ops*9/10 || n > ops+1 {
		t.Errorf("%d measured operations, want 1.5 s at %d/s", n, rate)
	}
	grace := (&workloadRun{spec: spec}).drainGrace()
	if res.Elapsed < spec.Duration-10*time.Millisecond || res.Elapsed > spec.Duration+grace+500*time.Millisecond {
		t.Errorf("elapsed %v, want the 1.5 s after the warm-up", res.Elapsed)
	}
	if warmP99 < 500_000 || !res.Series[0].Warmup || res.Series[len(res.Series)-1].Warmup {
		t.Errorf("series %+v: want the stall in a second of the warm-up, the last second out of it", res.Series)
	}
	// Leaked, the stall would put the p99 and the maximum past 500 ms; a
	// busy machine's own stalls reach a few hundred.
	if res.Total.P99Micros > 400_000 || res.Total.MaxMicros > 500_000 {
		t.Errorf("summary p99 %.0f µs max %.0f µs: the warm-up's stall leaked into it", res.Total.P99Micros, res.Total.MaxMicros)
	}

	// A warm-up of operations in a closed loop: the first ones started.
	before := testOpcounters(t, client)
	res, err = runOwnClient(t, srv.URI, Spec{NS: "wu.c", Ops: 500, WarmupOps: 200, Threads: 3, Mix: Mix{Read: 1}, KeySpace: 1000}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if q := testOpcounters(t, client)["query"] - before["query"]; res.Total.Count != 500 || res.Warmup.Ops != 200 || q != 700 {
		t.Errorf("500 ops after 200 of warm-up: %d measured, %d warm-up, %d queries on the server", res.Total.Count, res.Warmup.Ops, q)
	}

}

package workload

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Status is a workload so far, for a status line: the operations
// finished (warm-up included), the rate over the last interval, and the
// p99 latency of the operations the threads have handed over so far (each
// thread hands a second over once one of its operations ends in a later
// one; from the scheduled start in an open loop); 0 when none has been.
type Status struct {
	NS        string
	Elapsed   time.Duration
	Ops       int64
	OpsPerSec float64
	P99Micros float64
	// LastSecond is the last whole second handed over (-1: none yet), its
	// p99 latency over every operation of the mix (the slowest operation's;
	// 0 when none succeeded in it) and whether it began within the warm-up.
	LastSecond          int
	LastSecondP99Micros float64
	LastSecondWarmup    bool
}

func (s Status) String() string {
	p99 := dash
	if s.P99Micros > 0 {
		p99 = fmt.Sprintf("%.3f ms", s.P99Micros/1000)
	}
	return fmt.Sprintf("workload %s: %s: %d ops, %.0f ops/s, p99 %s so far", s.NS, s.Elapsed.Round(time.Second), s.Ops, s.OpsPerSec, p99)
}

// statusLine keeps what the next status needs.
type statusLine struct {
	at  time.Time
	ops int64
}

// dash stands for a value that was not measured, as wtd shows it.
const dash = "–"

// maybeStatus calls the Status hook when its interval has passed since
// the last call.
func (w *workloadRun) maybeStatus(last *statusLine, now time.Time, done int64) {
	if w.hooks.Status == nil || now.Sub(last.at) < cmp.Or(w.hooks.StatusInterval, DefaultStatusInterval) {
		return
	}
	st := Status{NS: w.spec.NS, Elapsed: now.Sub(w.start), Ops: done, P99Micros: w.series.p99SoFar(), LastSecond: -1}
	if sec, p99, ok := w.series.lastSecond(); ok {
		warmEnd := time.Duration(w.warmEnd.Load())
		st.LastSecond, st.LastSecondP99Micros = sec, p99
		st.LastSecondWarmup = warmEnd < 0 || time.Duration(sec)*time.Second < warmEnd
	}
	if el := now.Sub(last.at).Seconds(); el > 0 {
		st.OpsPerSec = float64(done-last.ops) / el
	}
	*last = statusLine{at: now, ops: done}
	w.hooks.Status(st)
}

// Watch defaults and bounds.
const (
	defaultWatchInterval = 100 * time.Millisecond
	maxWatchInterval     = time.Minute
	maxWatchFields       = 64
)

// WatchStats is a serverStatus field during a workload: its value right
// before and right after the run, and the minimum, maximum and mean of
// every reading (those two included).
type WatchStats struct {
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Mean    float64 `json:"mean"`
	Samples int     `json:"samples"`
}

func checkWatch(s *Spec) error {
	if len(s.Watch) > maxWatchFields {
		return fmt.Errorf("watch: %d fields, at most %d", len(s.Watch), maxWatchFields)
	}
	for _, p := range s.Watch {
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
			return fmt.Errorf("watch: %q is not a dotted serverStatus path such as \"queues.execution.read.normalPriority.queueLength\"", p)
		}
	}
	if s.WatchInterval == 0 {
		s.WatchInterval = defaultWatchInterval
	}
	if s.WatchInterval < time.Millisecond || s.WatchInterval > maxWatchInterval {
		return fmt.Errorf("watch_interval %v out of range [1ms, %v]", s.WatchInterval, maxWatchInterval)
	}
	return nil
}

// watcher reads the watched serverStatus fields on its own goroutine.
type watcher struct {
	db       *mongo.Database
	cmd      bson.D
	paths    [][]string
	interval time.Duration

	mu    sync.Mutex
	stats []WatchStats
	sum   []float64
	stop  chan struct{}
	done  chan struct{}
}

// startWatch reads the watched fields once before the run starts (a field
// that is missing or not a number is an error then) and returns the
// watcher, nil when nothing is watched.
func (w *workloadRun) startWatch(ctx context.Context) (*watcher, error) {
	if len(w.spec.Watch) == 0 {
		return nil, nil
	}
	wt := &watcher{db: w.coll.Database().Client().Database("admin"), interval: w.spec.WatchInterval,
		stats: make([]WatchStats, len(w.spec.Watch)), sum: make([]float64, len(w.spec.Watch)),
		stop: make(chan struct{}), done: make(chan struct{})}
	wiredTiger := false
	for _, p := range w.spec.Watch {
		wt.paths = append(wt.paths, strings.Split(p, "."))
		wiredTiger = wiredTiger || strings.HasPrefix(p, "wiredTiger.")
	}
	wt.cmd = bson.D{{Key: "serverStatus", Value: 1}}
	if !wiredTiger { // the largest section, skipped when not watched
		wt.cmd = append(wt.cmd, bson.E{Key: "wiredTiger", Value: 0})
	}
	if err := wt.sample(ctx, true); err != nil {
		return nil, err
	}
	return wt, nil
}

// sample reads the fields once; strict makes a missing field an error.
func (wt *watcher) sample(ctx context.Context, strict bool) error {
	raw, err := wt.db.RunCommand(ctx, wt.cmd).Raw()
	if err != nil {
		return fmt.Errorf("watch: serverStatus: %w", err)
	}
	vals := make([]float64, len(wt.paths))
	var missing []string
	for i, p := range wt.paths {
		v, err := raw.LookupErr(p...)
		f, ok := v.AsFloat64OK()
		if err != nil || !ok {
			missing = append(missing, strings.Join(p, "."))
			continue
		}
		vals[i] = f
	}
	if len(missing) > 0 {
		if strict {
			return fmt.Errorf("watch: serverStatus has no number at %s", strings.Join(missing, ", "))
		}
		return nil
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	for i, v := range vals {
		st := &wt.stats[i]
		if st.Samples == 0 {
			st.Start, st.Min, st.Max = v, v, v
		}
		st.End, st.Min, st.Max = v, math.Min(st.Min, v), math.Max(st.Max, v)
		st.Samples++
		wt.sum[i] += v
	}
	return nil
}

// run reads the fields every interval until finish.
func (wt *watcher) run(ctx context.Context) {
	go func() {
		defer close(wt.done)
		tick := time.NewTicker(wt.interval)
		defer tick.Stop()
		for {
			select {
			case <-wt.stop:
				return
			case <-tick.C:
				_ = wt.sample(ctx, false) // a missed reading is only a missed reading
			}
		}
	}()
}

// finish stops the readings, reads the fields a last time (unless ctx is
// done: the run's client is then closed) and returns their statistics by
// name.
func (wt *watcher) finish(ctx context.Context, names []string) map[string]WatchStats {
	close(wt.stop)
	<-wt.done
	if ctx.Err() == nil {
		_ = wt.sample(ctx, false)
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	out := map[string]WatchStats{}
	for i, name := range names {
		st := wt.stats[i]
		if st.Samples > 0 {
			st.Mean = wt.sum[i] / float64(st.Samples)
		}
		out[name] = st
	}
	return out
}

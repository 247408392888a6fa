package engine

import (
	"context"
	"os"
	"sync"
	"time"

	"wtd/hostctl"
)

// sampler records, every interval from run start to end, the host's
// metrics and the full serverStatus of each running server (every numeric
// field, flattened). A server in a restart gap is skipped, not an error;
// a failing collector marks itself in an event and sampling goes on.
type sampler struct {
	r         *Run
	interval  time.Duration
	collector *hostctl.Collector

	mu       sync.Mutex
	servers  []*Server
	trackers map[*peakTracker]struct{}
	hosts    map[*hostLoadTracker]struct{}
	failed   map[string]bool
	stopCh   chan struct{}
	done     chan struct{}
	// Samples counts the samples written.
	samples int64
}

func newSampler(r *Run, interval time.Duration) *sampler {
	sm := &sampler{r: r, interval: interval, collector: r.cfg.Host.NewCollector(),
		trackers: map[*peakTracker]struct{}{}, hosts: map[*hostLoadTracker]struct{}{}, failed: map[string]bool{},
		stopCh: make(chan struct{}), done: make(chan struct{})}
	// wtd's own CPU and I/O (proc.wtd.*), told apart from other
	// processes' in a step's host load.
	sm.collector.Watch("wtd", int32(os.Getpid()))
	return sm
}

// trackHost starts gathering the host samples of a step.
func (sm *sampler) trackHost() *hostLoadTracker {
	t := &hostLoadTracker{}
	sm.mu.Lock()
	sm.hosts[t] = struct{}{}
	sm.mu.Unlock()
	return t
}

func (sm *sampler) untrackHost(t *hostLoadTracker) {
	sm.mu.Lock()
	delete(sm.hosts, t)
	sm.mu.Unlock()
}

// watch adds s (or refreshes its pid after a restart).
func (sm *sampler) watch(s *Server) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	found := false
	for _, x := range sm.servers {
		found = found || x == s
	}
	if !found {
		sm.servers = append(sm.servers, s)
	}
	if pid := s.PID(); pid > 0 {
		sm.collector.Watch(s.Name, int32(pid))
	}
}

func (sm *sampler) start() {
	if sm.interval <= 0 {
		close(sm.done)
		return
	}
	go sm.loop()
}

func (sm *sampler) stop() {
	if sm.interval <= 0 {
		return
	}
	select {
	case <-sm.stopCh:
	default:
		close(sm.stopCh)
	}
	<-sm.done
}

func (sm *sampler) loop() {
	defer close(sm.done)
	t := time.NewTicker(sm.interval)
	defer t.Stop()
	for {
		sm.sampleOnce()
		select {
		case <-sm.stopCh:
			sm.sampleOnce()
			return
		case <-t.C:
		}
	}
}

// sampleOnce takes one sample of the host and every available server.
func (sm *sampler) sampleOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), max(sm.interval, time.Second))
	defer cancel()
	now := time.Now()
	host, err := sm.collector.Collect(ctx)
	sm.note("host", err)
	if len(host) > 0 {
		sm.r.cfg.Store.AddSample(sm.r.ID, "host", now, host)
		sm.count()
		sm.mu.Lock()
		hosts := make([]*hostLoadTracker, 0, len(sm.hosts))
		for t := range sm.hosts {
			hosts = append(hosts, t)
		}
		sm.mu.Unlock()
		for _, t := range hosts {
			t.observe(host)
		}
	}
	sm.mu.Lock()
	servers := append([]*Server(nil), sm.servers...)
	sm.mu.Unlock()
	for _, s := range servers {
		if !s.available() {
			continue
		}
		m, err := s.sampleStatus(ctx)
		if err != nil {
			if s.available() {
				sm.note("server:"+s.Name, err)
			}
			continue
		}
		sm.note("server:"+s.Name, nil)
		sm.r.cfg.Store.AddSample(sm.r.ID, "server:"+s.Name, now, m)
		sm.count()
		sm.feed(s, m)
	}
}

func (sm *sampler) count() {
	sm.mu.Lock()
	sm.samples++
	sm.mu.Unlock()
}

// note reports a collector's first failure and its recovery as events.
func (sm *sampler) note(source string, err error) {
	sm.mu.Lock()
	was := sm.failed[source]
	sm.failed[source] = err != nil
	sm.mu.Unlock()
	if err != nil && !was {
		sm.r.Eventf("warn", "sampler", "sampling %s failed: %v", source, err)
	} else if err == nil && was {
		sm.r.Eventf("info", "sampler", "sampling %s works again", source)
	}
}

// sampleStatus returns the server's flattened serverStatus.
func (s *Server) sampleStatus(ctx context.Context) (map[string]float64, error) {
	raw, err := s.ServerStatus(ctx)
	if err != nil {
		return nil, err
	}
	return FlattenNumbers(raw), nil
}

// peakTracker follows the maxima of some metrics of one server during a
// step.
type peakTracker struct {
	server  *Server
	metrics []string
	mu      sync.Mutex
	peak    map[string]float64
}

func (sm *sampler) track(s *Server, metrics ...string) *peakTracker {
	pt := &peakTracker{server: s, metrics: metrics, peak: map[string]float64{}}
	sm.mu.Lock()
	sm.trackers[pt] = struct{}{}
	sm.mu.Unlock()
	return pt
}

func (sm *sampler) untrack(pt *peakTracker) {
	sm.mu.Lock()
	delete(sm.trackers, pt)
	sm.mu.Unlock()
}

func (sm *sampler) feed(s *Server, m map[string]float64) {
	sm.mu.Lock()
	var ts []*peakTracker
	for pt := range sm.trackers {
		if pt.server == s {
			ts = append(ts, pt)
		}
	}
	sm.mu.Unlock()
	for _, pt := range ts {
		pt.observe(m)
	}
}

func (pt *peakTracker) observe(m map[string]float64) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for _, k := range pt.metrics {
		if v, ok := m[k]; ok {
			if old, seen := pt.peak[k]; !seen || v > old {
				pt.peak[k] = v
			}
		}
	}
}

// get returns the peak of k, nil when no sample had it.
func (pt *peakTracker) get(k string) *float64 {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if v, ok := pt.peak[k]; ok {
		return &v
	}
	return nil
}

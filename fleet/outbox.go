package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"wtd/engine/store"
)

// Backoff bounds of the outbox's retries.
const (
	DefaultRetryFirst = 5 * time.Second
	DefaultRetryMax   = 10 * time.Minute
	// DefaultPushTimeout bounds the push of one run.
	DefaultPushTimeout = 2 * time.Minute
)

// Pusher drains a results database's outbox into the results store.
type Pusher struct {
	Config Config
	Store  *store.Store
	Log    *slog.Logger // nil: no log
	// RetryFirst and RetryMax bound the wait after a failed attempt: the
	// first, doubled after each failure up to the max. 0: the defaults.
	RetryFirst, RetryMax time.Duration
	// PushTimeout bounds each run's push; 0: DefaultPushTimeout.
	PushTimeout time.Duration
	// Now is the clock (nil: time.Now), for tests of the backoff.
	Now func() time.Time
}

// Result is what one run's push came to.
type Result struct {
	RunID int64
	Stats Stats
	Err   error
}

func (p *Pusher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Backoff is the wait after the attempts-th failure in a row (1, 2, ...).
func (p *Pusher) Backoff(attempts int) time.Duration {
	first, most := p.RetryFirst, p.RetryMax
	if first <= 0 {
		first = DefaultRetryFirst
	}
	if most <= 0 {
		most = DefaultRetryMax
	}
	d := first
	for i := 1; i < attempts && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// PushDue pushes the runs of the outbox whose attempt is due, and records
// each outcome there: acknowledged, or failed with the next attempt
// after the backoff. A store that cannot be reached fails every due run
// at once (one connection attempt, bounded by Config.Timeout).
func (p *Pusher) PushDue(ctx context.Context) ([]Result, error) {
	due, err := p.Store.PushesDue(ctx, p.now())
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(due))
	attempts := map[int64]int{}
	for i, d := range due {
		ids[i] = d.RunID
		attempts[d.RunID] = d.Attempts
	}
	return p.push(ctx, ids, attempts)
}

// PushRuns queues runs ids and pushes them now, whatever their backoff.
func (p *Pusher) PushRuns(ctx context.Context, ids []int64) ([]Result, error) {
	if err := p.Store.QueuePush(ctx, ids...); err != nil {
		return nil, err
	}
	return p.push(ctx, ids, map[int64]int{})
}

func (p *Pusher) push(ctx context.Context, ids []int64, attempts map[int64]int) ([]Result, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	results := make([]Result, 0, len(ids))
	sink, err := Open(ctx, p.Config)
	if err != nil {
		for _, id := range ids {
			results = append(results, p.record(ctx, Result{RunID: id, Err: err}, attempts[id]))
		}
		return results, nil
	}
	defer sink.Close(context.WithoutCancel(ctx))
	timeout := p.PushTimeout
	if timeout <= 0 {
		timeout = DefaultPushTimeout
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		stats, err := sink.Push(pctx, p.Store, id)
		cancel()
		results = append(results, p.record(ctx, Result{RunID: id, Stats: stats, Err: err}, attempts[id]))
	}
	return results, nil
}

// record notes r in the outbox and the log.
func (p *Pusher) record(ctx context.Context, r Result, attempts int) Result {
	ctx = context.WithoutCancel(ctx)
	if r.Err == nil {
		if err := p.Store.PushDone(ctx, r.RunID, p.Config.Dest(), p.now()); err != nil {
			r.Err = fmt.Errorf("record the push of run %d: %w", r.RunID, err)
			return r
		}
		if p.Log != nil {
			p.Log.Info("run pushed", "run", r.RunID, "results", p.Config.Dest(), "docs", r.Stats.Docs,
				"new", r.Stats.Inserted, "bytes", r.Stats.Bytes)
		}
		return r
	}
	wait := p.Backoff(attempts + 1)
	reason := store.RedactURI(r.Err.Error())
	if err := p.Store.PushFailed(ctx, r.RunID, reason, p.now().Add(wait)); err != nil {
		r.Err = fmt.Errorf("%v; record it: %w", r.Err, err)
	}
	if p.Log != nil {
		p.Log.Warn("run not pushed", "run", r.RunID, "results", p.Config.Dest(), "error", reason, "retry_in", wait.String())
	}
	return r
}

// Run pushes what is due now, then whenever wake says a run was queued,
// and when the earliest retry is due (checked every poll at the latest),
// until ctx ends.
func (p *Pusher) Run(ctx context.Context, wake <-chan struct{}, poll time.Duration) {
	if poll <= 0 {
		poll = 30 * time.Second
	}
	for {
		if _, err := p.PushDue(ctx); err != nil && p.Log != nil && ctx.Err() == nil {
			p.Log.Warn("read the outbox", "error", err)
		}
		wait := poll
		if at, ok, err := p.Store.NextPushAt(ctx); err == nil && ok {
			wait = min(poll, max(at.Sub(p.now()), 100*time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

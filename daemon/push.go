package daemon

import (
	"context"
	"time"

	"wtd/fleet"
	"wtd/schedule"
)

// pushPoll is how often the pusher looks at the outbox when nothing wakes
// it (a retry due sooner wakes it sooner).
const pushPoll = 30 * time.Second

// startPusher starts the goroutine that pushes ended runs to the results
// store, and returns the function that stops it and waits for it. It
// pushes what the outbox holds from before at once. Pushes happen after a
// run's end, on their own goroutine, each bounded: a results store that
// is down or slow never delays a run or a fire.
func (d *daemon) startPusher(ctx context.Context, results fleet.Config) (stop func()) {
	d.pushWake = make(chan struct{}, 1)
	p := &fleet.Pusher{Config: results, Store: d.st, Log: d.opts.Log}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, d.pushWake, pushPoll)
	}()
	d.opts.Log.Info("pushing ended runs", "results", results.Dest())
	return func() {
		cancel()
		<-done
	}
}

// queuePush queues an ended run's push and wakes the pusher: called once
// the run's end (with its verdict) is recorded.
func (d *daemon) queuePush(end schedule.RunEnd) {
	if d.pushWake == nil || end.RunID == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.st.QueuePush(ctx, end.RunID); err != nil {
		d.opts.Log.Error("queue the push of a run", "run", end.RunID, "error", err)
		return
	}
	select {
	case d.pushWake <- struct{}{}:
	default:
	}
}

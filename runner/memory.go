package runner

import (
	"fmt"
	"runtime/debug"
	"time"

	"wtd/engine"
)

// memoryEvery is how often the watchdog reads the process's memory.
const memoryEvery = 50 * time.Millisecond

// watchMemory enforces Limits.MaxMemory while the run plays (what
// engine.MemoryInUse says, every memoryEvery): the soft limit makes the garbage collector work harder near it, and past it the
// run is stopped with a *engine.LimitError. The returned func ends the
// watch and puts the soft limit back.
func (r *Run) watchMemory() (stop func()) {
	limit := r.limits.MaxMemory
	if limit <= 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(memoryEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if used := engine.MemoryInUse(); used > limit {
				r.Eventf("error", "run", "the process holds %s, more than the run's memory limit %s: stopping the run",
					engine.FormatBytes(used), engine.FormatBytes(limit))
				r.Abort(&engine.LimitError{Msg: fmt.Sprintf("playbook used more than %s (--max-memory)", engine.FormatBytes(limit))})
				// Past the limit the soft limit only makes the collector
				// run without pause while the run ends.
				debug.SetMemoryLimit(prev)
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		debug.SetMemoryLimit(prev)
	}
}

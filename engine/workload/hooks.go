package workload

import "time"

// DefaultStatusInterval is how often a workload calls its Status hook
// when Hooks.StatusInterval is 0.
const DefaultStatusInterval = 10 * time.Second

// Hooks are what a caller adds to a load or a workload; each may be left
// out.
type Hooks struct {
	// Progress is called from the run's own goroutine every 250 ms and
	// once at the end, with what is done (a load: the documents
	// acknowledged; a workload: the operations finished, warm-up
	// included) and the total that counts towards (0 when it is not known
	// beforehand).
	Progress func(done, total int64)
	// Status is called from the run's own goroutine every StatusInterval
	// (0: DefaultStatusInterval) with the workload so far, for a status
	// line. A load does not call it.
	Status         func(Status)
	StatusInterval time.Duration
	// Down tells whether the server went down: nil while it is up, else
	// why (a DownError). It is asked when every operation has failed for
	// a second, so that the run stops with that reason rather than an
	// *AllFailingError quoting a failure.
	Down func() error
	// Abort ends the operations in flight (by closing the connections of
	// a client the run owns); a workload calls it when its context ends.
	// The threads then give the driver contexts without a Done channel,
	// which spares the driver a cancellation listener per operation (a
	// goroutine hand-off that cost about 10% of the client's CPU per
	// point read). A load does not call it.
	Abort func()
}

// DownError is an error that says when the server of a load or workload
// went down. A run whose context ends with one as its cause counts its
// time until then (see upTime).
type DownError interface {
	error
	DownAt() time.Time
}

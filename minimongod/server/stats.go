package server

import (
	"sync/atomic"
	"time"
)

// counters are the server-wide numbers serverStatus reports.
type counters struct {
	opInsert, opQuery, opUpdate, opDelete, opGetMore, opCommand atomic.Int64

	docInserted, docReturned, docUpdated, docDeleted atomic.Int64
	keysExamined, docsExamined                       atomic.Int64
	scanAndOrder, writeConflicts                     atomic.Int64
	commandFailed                                    atomic.Int64

	bytesIn, bytesOut, numRequests atomic.Int64
	totalConns                     atomic.Int64
	rejectedConns                  atomic.Int64

	cursorsTimedOut, cursorsTotalOpened atomic.Int64

	checkpoints, lastCheckpointMillis atomic.Int64

	ttlPasses, ttlDeleted atomic.Int64

	latency [3]latencyStat // reads, writes, commands
}

type latencyStat struct{ ops, micros atomic.Int64 }

const (
	latencyCommands = iota
	latencyReads
	latencyWrites
)

func (c *counters) observeLatency(class int, d time.Duration) {
	c.latency[class].ops.Add(1)
	c.latency[class].micros.Add(d.Microseconds())
}

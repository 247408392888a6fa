package workload

import (
	"context"
	"errors"
	"math"
	"sync"
)

// ErrNoNamespace is Complete's error for a spec without NS before any
// load gave a default.
var ErrNoNamespace = errors.New("ns is required (no load gave a default)")

// Loads remembers the loads that succeeded, for the workloads after them:
// the namespace loaded last and the document size each namespace was
// loaded with. It is safe for concurrent use; a nil *Loads remembers
// nothing.
type Loads struct {
	mu       sync.Mutex
	last     string
	docBytes map[string]int
}

// Note records a load of spec that succeeded.
func (l *Loads) Note(spec LoadSpec) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.docBytes == nil {
		l.docBytes = map[string]int{}
	}
	l.last, l.docBytes[spec.NS] = spec.NS, spec.DocBytes
}

// Last returns the namespace loaded last, "" before any load.
func (l *Loads) Last() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// DocBytes returns the document size ns was last loaded with.
func (l *Loads) DocBytes(ns string) (int, bool) {
	if l == nil {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.docBytes[ns]
	return n, ok
}

// Collections tells a collection's document count and average document
// size, from collStats (engine's *Server is one).
type Collections interface {
	CollectionStats(ctx context.Context, ns string) (count int64, avgObjSize float64, err error)
}

// Defaults say which fields of a Spec Complete works out.
type Defaults struct {
	// KeySpace takes Spec.KeySpace from collStats' count.
	KeySpace bool
	// DocBytes takes Spec.DocBytes from the load of the namespace, else
	// from collStats' average document size.
	DocBytes bool
	// WorkingSet, if set, gives Spec.WorkingSetKeys.
	WorkingSet *WorkingSet
}

// WorkingSet is a working set as a share of the key space or a size (see
// WorkingSetKeys).
type WorkingSet struct {
	Size float64
	Unit string // UnitFraction (or "") or UnitMB
}

// Complete fills in the fields of spec that a playbook's m:workload may
// leave out, as it does: an empty NS is the namespace loaded last
// (ErrNoNamespace before any load); then, as d says, the key space is the
// collection's document count, the document size that of the load of NS
// (else the collection's average), and the working set's keys come from
// WorkingSetKeys over the key space and the average size. It reads
// collStats of NS once, through c.
func Complete(ctx context.Context, c Collections, loads *Loads, spec Spec, d Defaults) (Spec, error) {
	if spec.NS == "" {
		if spec.NS = loads.Last(); spec.NS == "" {
			return spec, ErrNoNamespace
		}
	}
	count, avg, err := c.CollectionStats(ctx, spec.NS)
	if err != nil {
		return spec, err
	}
	if d.KeySpace {
		spec.KeySpace = count
	}
	if d.DocBytes {
		if n, ok := loads.DocBytes(spec.NS); ok {
			spec.DocBytes = n
		} else {
			spec.DocBytes = int(math.Round(avg))
		}
	}
	if ws := d.WorkingSet; ws != nil {
		if spec.WorkingSetKeys, err = WorkingSetKeys(ws.Size, ws.Unit, spec.KeySpace, avg); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

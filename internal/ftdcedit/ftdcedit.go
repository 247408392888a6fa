// Package ftdcedit writes FTDC files for tests from a real file's samples:
// a stretch of them as a process of its own, with metrics and the command
// line changed as a test plants them. What it does not change is the real
// server's: the other thousands of metrics, their types and their noise.
package ftdcedit

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/ftdc"
)

// Options say what Copy keeps and changes.
type Options struct {
	// From and To are the samples copied, as offsets from the file's
	// first sample (To 0: to the end).
	From, To time.Duration
	// PID, if not 0, makes the copy another process of the same server:
	// serverStatus.pid is PID, and its uptime starts at the first sample
	// copied.
	PID int64
	// Metadata, if not nil, changes the type-0 document (the file's first)
	// written before the samples.
	Metadata func(doc bson.D) bson.D
	// Sample, if not nil, changes each sample copied; off is its time from
	// the first sample copied.
	Sample func(off time.Duration, s Sample)
}

// Sample is one sample being copied.
type Sample struct {
	c *ftdc.Chunk
	s int
}

// Get returns metric name's value ("serverStatus.opcounters.query").
func (s Sample) Get(name string) (int64, bool) {
	m := s.c.Index(name)
	if m < 0 {
		return 0, false
	}
	return s.c.Values[m*s.c.Samples+s.s], true
}

// Add adds d to metric name's value; it reports whether the sample has it.
func (s Sample) Add(name string, d int64) bool {
	m := s.c.Index(name)
	if m < 0 {
		return false
	}
	s.c.Values[m*s.c.Samples+s.s] += d
	return true
}

// Set sets metric name's value; it reports whether the sample has it.
func (s Sample) Set(name string, v int64) bool {
	m := s.c.Index(name)
	if m < 0 {
		return false
	}
	s.c.Values[m*s.c.Samples+s.s] = v
	return true
}

// Copy writes to dst the samples of src that opt keeps, changed as opt
// says, after src's first metadata document, and returns how many it wrote.
func Copy(src, dst string, opt Options) (int, error) {
	r, err := ftdc.Open(src)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := ftdc.NewWriter(f)
	var meta bson.Raw
	var first, start int64 // ms: the file's first sample, the first copied
	var up0, upS0, upE0 int64
	n := 0
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		switch v := it.(type) {
		case *ftdc.Metadata:
			if meta == nil && v.Type == ftdc.TypeMetadata {
				meta = append(bson.Raw(nil), v.Doc...)
			}
		case *ftdc.Chunk:
			for s := 0; s < v.Samples; s++ {
				ts := v.Times[s]
				if first == 0 {
					first = ts
				}
				off := time.Duration(ts-first) * time.Millisecond
				if off < opt.From || opt.To > 0 && off > opt.To {
					continue
				}
				smp := Sample{c: v, s: s}
				if start == 0 {
					start = ts
					up0, _ = smp.Get("serverStatus.uptimeMillis")
					upS0, _ = smp.Get("serverStatus.uptime")
					upE0, _ = smp.Get("serverStatus.uptimeEstimate")
					if err := writeMetadata(w, meta, time.UnixMilli(ts), opt.Metadata); err != nil {
						return n, err
					}
				}
				if opt.PID != 0 {
					smp.Set("serverStatus.pid", opt.PID)
					smp.Add("serverStatus.uptimeMillis", -up0)
					smp.Add("serverStatus.uptime", -upS0)
					smp.Add("serverStatus.uptimeEstimate", -upE0)
				}
				if opt.Sample != nil {
					opt.Sample(time.Duration(ts-start)*time.Millisecond, smp)
				}
				doc, err := v.Doc(s)
				if err != nil {
					return n, err
				}
				if err := w.Add(time.UnixMilli(ts), doc); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, f.Close()
}

func writeMetadata(w *ftdc.Writer, meta bson.Raw, at time.Time, edit func(bson.D) bson.D) error {
	if meta == nil {
		return nil
	}
	var doc bson.D
	if err := bson.Unmarshal(meta, &doc); err != nil {
		return fmt.Errorf("read metadata: %w", err)
	}
	if edit != nil {
		doc = edit(doc)
	}
	return w.WriteMetadata(at, doc)
}

// SetPath sets the value at path in doc (a key path through nested
// documents, made where missing) and returns doc.
func SetPath(doc bson.D, v any, path ...string) bson.D {
	for i := range doc {
		if doc[i].Key != path[0] {
			continue
		}
		if len(path) == 1 {
			doc[i].Value = v
			return doc
		}
		sub, _ := doc[i].Value.(bson.D)
		doc[i].Value = SetPath(sub, v, path[1:]...)
		return doc
	}
	if len(path) == 1 {
		return append(doc, bson.E{Key: path[0], Value: v})
	}
	return append(doc, bson.E{Key: path[0], Value: SetPath(nil, v, path[1:]...)})
}

// CacheSizeGB returns a Metadata edit that puts --wiredTigerCacheSizeGB gb
// on the command line getCmdLineOpts records.
func CacheSizeGB(gb float64) func(bson.D) bson.D {
	return func(doc bson.D) bson.D {
		doc = SetPath(doc, gb, "getCmdLineOpts", "parsed", "storage", "wiredTiger", "engineConfig", "cacheSizeGB")
		for i := range doc {
			if doc[i].Key != "getCmdLineOpts" {
				continue
			}
			opts, _ := doc[i].Value.(bson.D)
			for j := range opts {
				if opts[j].Key == "argv" {
					argv, _ := opts[j].Value.(bson.A)
					opts[j].Value = append(argv, "--wiredTigerCacheSizeGB", fmt.Sprint(gb))
				}
			}
		}
		return doc
	}
}

// Queries returns a Sample edit that plants a query load on a server's
// samples: at offset off, load(off) queries a second finishing, each taking
// micros, with up to noise more or fewer between two samples (drawn from a
// generator seeded with seed). It adds to opcounters.query and to
// opLatencies.reads' ops and latency, the counters a real load moves.
func Queries(load func(off time.Duration) (perSec, micros int64), noise, seed int64) func(time.Duration, Sample) {
	rng := rand.New(rand.NewSource(seed))
	var queries, latency, prev int64
	var due float64 // the queries the load owes so far, fractions kept
	return func(off time.Duration, s Sample) {
		if dt := off.Milliseconds() - prev; dt > 0 {
			rate, micros := load(off)
			before := int64(due)
			due += float64(rate*dt) / 1000
			q := max(0, int64(due)-before+rng.Int63n(2*noise+1)-noise)
			queries, latency = queries+q, latency+q*micros
		}
		prev = off.Milliseconds()
		s.Add("serverStatus.opcounters.query", queries)
		s.Add("serverStatus.opLatencies.reads.ops", queries)
		s.Add("serverStatus.opLatencies.reads.latency", latency)
	}
}

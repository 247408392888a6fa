package server

import (
	"os"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/wt"
)

// appendWTStats appends WiredTiger statistics as mongod's
// WiredTigerUtil::exportTableToBSON does: each "category: description"
// becomes doc[category][description] (a long), in cursor order, plus uri.
func appendWTStats(dst []byte, key, uri string, stats []wt.Stat, extra ...func([]byte) []byte) []byte {
	type group struct {
		name  string
		stats []wt.Stat
	}
	var groups []*group
	byName := map[string]*group{}
	var plain []wt.Stat
	for _, st := range stats {
		cat, desc, ok := strings.Cut(st.Desc, ": ")
		if !ok {
			plain = append(plain, st)
			continue
		}
		g := byName[cat]
		if g == nil {
			g = &group{name: cat}
			byName[cat] = g
			groups = append(groups, g)
		}
		g.stats = append(g.stats, wt.Stat{Desc: desc, Value: st.Value})
	}
	idx, d := bsoncore.AppendDocumentElementStart(dst, key)
	d = bsoncore.AppendStringElement(d, "uri", uri)
	for _, st := range plain {
		d = bsoncore.AppendInt64Element(d, st.Desc, st.Value)
	}
	for _, g := range groups {
		gi, dd := bsoncore.AppendDocumentElementStart(d, g.name)
		for _, st := range g.stats {
			dd = bsoncore.AppendInt64Element(dd, st.Desc, st.Value)
		}
		d, _ = bsoncore.AppendDocumentEnd(dd, gi)
	}
	for _, f := range extra {
		d = f(d)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// statusSection appends one serverStatus section.
type statusSection struct {
	name string
	add  func(c *clientConn, dst []byte) []byte
}

var statusSections = []statusSection{
	{"asserts", statusAsserts},
	{"connections", statusConnections},
	{"globalLock", statusGlobalLock},
	{"mem", statusMem},
	{"metrics", statusMetrics},
	{"network", statusNetwork},
	{"opLatencies", statusOpLatencies},
	{"opcounters", statusOpcounters},
	{"queues", statusQueues},
	{"storageEngine", statusStorageEngine},
	{"wiredTiger", statusWiredTiger},
}

func cmdServerStatus(c *clientConn, req *request, dst []byte) ([]byte, error) {
	now := time.Now()
	up := now.Sub(c.s.started)
	d := bsoncore.AppendStringElement(dst, "host", hostname()+":"+strconv.Itoa(c.s.opts.Port))
	d = bsoncore.AppendStringElement(d, "version", MongoVersion)
	d = bsoncore.AppendStringElement(d, "process", "mongod")
	d = bsoncore.AppendInt64Element(d, "pid", int64(os.Getpid()))
	d = bsoncore.AppendDoubleElement(d, "uptime", float64(int64(up.Seconds())))
	d = bsoncore.AppendInt64Element(d, "uptimeMillis", up.Milliseconds())
	d = bsoncore.AppendInt64Element(d, "uptimeEstimate", int64(up.Seconds()))
	d = appendDate(d, "localTime", now)
	for _, sec := range statusSections {
		if v, err := req.lookupErr(sec.name); err == nil && !truthy(v) {
			continue
		}
		d = sec.add(c, d)
	}
	return d, nil
}

func truthy(v bsoncore.Value) bool {
	switch v.Type {
	case bsoncore.TypeBoolean:
		return v.Boolean()
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble:
		f, _ := v.AsFloat64OK()
		return f != 0
	case bsoncore.TypeNull, bsoncore.TypeUndefined:
		return false
	}
	return true
}

func subdoc(dst []byte, key string, f func([]byte) []byte) []byte {
	idx, d := bsoncore.AppendDocumentElementStart(dst, key)
	d = f(d)
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

func statusAsserts(c *clientConn, d []byte) []byte {
	return subdoc(d, "asserts", func(d []byte) []byte {
		for _, k := range []string{"regular", "warning", "msg", "user", "rollovers"} {
			v := int32(0)
			if k == "user" {
				v = int32(c.s.stats.commandFailed.Load())
			}
			d = bsoncore.AppendInt32Element(d, k, v)
		}
		return d
	})
}

func statusConnections(c *clientConn, d []byte) []byte {
	c.s.mu.Lock()
	cur := len(c.s.conns)
	c.s.mu.Unlock()
	return subdoc(d, "connections", func(d []byte) []byte {
		d = bsoncore.AppendInt32Element(d, "current", int32(cur))
		d = bsoncore.AppendInt32Element(d, "available", int32(max(0, c.s.opts.MaxConns-cur)))
		d = bsoncore.AppendInt32Element(d, "totalCreated", int32(c.s.stats.totalConns.Load()))
		d = bsoncore.AppendInt32Element(d, "active", int32(cur))
		d = bsoncore.AppendInt64Element(d, "rejected", c.s.stats.rejectedConns.Load())
		return d
	})
}

func statusGlobalLock(c *clientConn, d []byte) []byte {
	return subdoc(d, "globalLock", func(d []byte) []byte {
		d = bsoncore.AppendInt64Element(d, "totalTime", time.Since(c.s.started).Microseconds())
		r, w := c.s.exec.read.snapshot(), c.s.exec.write.snapshot()
		// mongostat's qr/qw and ar/aw: operations queued for and holding
		// tickets.
		d = appendReadersWriters(d, "currentQueue", r.queued, w.queued)
		return appendReadersWriters(d, "activeClients", r.out, w.out)
	})
}

func appendReadersWriters(d []byte, key string, readers, writers int) []byte {
	return subdoc(d, key, func(d []byte) []byte {
		d = bsoncore.AppendInt32Element(d, "total", int32(readers+writers))
		d = bsoncore.AppendInt32Element(d, "readers", int32(readers))
		return bsoncore.AppendInt32Element(d, "writers", int32(writers))
	})
}

// statusQueues is queues.execution as mongod 7.0+ reports it.
func statusQueues(c *clientConn, d []byte) []byte {
	x := c.s.exec
	return subdoc(d, "queues", func(d []byte) []byte {
		return subdoc(d, "execution", func(d []byte) []byte {
			alg, _ := x.settings()
			d = bsoncore.AppendStringElement(d, "concurrencyAdjustmentAlgorithm", alg)
			for _, k := range []ticketKind{writeTicket, readTicket} {
				snap := x.holder(k).snapshot()
				d = subdoc(d, k.String(), func(d []byte) []byte {
					d = snap.appendCounts(d)
					return subdoc(d, "normalPriority", snap.appendNormalPriority)
				})
			}
			return subdoc(d, "monitor", x.probeStats().appendMonitor)
		})
	})
}

// appendConcurrentTransactions is wiredTiger.concurrentTransactions, the
// layout of mongod before 7.0.
func appendConcurrentTransactions(c *clientConn, d []byte) []byte {
	return subdoc(d, "concurrentTransactions", func(d []byte) []byte {
		for _, k := range []ticketKind{writeTicket, readTicket} {
			d = subdoc(d, k.String(), c.s.exec.holder(k).snapshot().appendCounts)
		}
		return d
	})
}

// selfMemMB returns resident and virtual memory of this process in MB.
func selfMemMB() (res, virt int64) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0
	}
	pages := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	ps := int64(os.Getpagesize())
	return pages(f[1]) * ps >> 20, pages(f[0]) * ps >> 20
}

func statusMem(c *clientConn, d []byte) []byte {
	res, virt := selfMemMB()
	return subdoc(d, "mem", func(d []byte) []byte {
		d = bsoncore.AppendInt32Element(d, "bits", 64)
		d = bsoncore.AppendInt32Element(d, "resident", int32(res))
		d = bsoncore.AppendInt32Element(d, "virtual", int32(virt))
		return bsoncore.AppendBooleanElement(d, "supported", true)
	})
}

func statusMetrics(c *clientConn, d []byte) []byte {
	st := &c.s.stats
	return subdoc(d, "metrics", func(d []byte) []byte {
		d = subdoc(d, "cursor", func(d []byte) []byte {
			d = bsoncore.AppendInt64Element(d, "timedOut", st.cursorsTimedOut.Load())
			return subdoc(d, "open", func(d []byte) []byte {
				d = bsoncore.AppendInt64Element(d, "noTimeout", 0)
				d = bsoncore.AppendInt64Element(d, "pinned", 0)
				return bsoncore.AppendInt64Element(d, "total", int64(c.s.cursors.count()))
			})
		})
		d = subdoc(d, "document", func(d []byte) []byte {
			d = bsoncore.AppendInt64Element(d, "deleted", st.docDeleted.Load())
			d = bsoncore.AppendInt64Element(d, "inserted", st.docInserted.Load())
			d = bsoncore.AppendInt64Element(d, "returned", st.docReturned.Load())
			return bsoncore.AppendInt64Element(d, "updated", st.docUpdated.Load())
		})
		d = subdoc(d, "ttl", func(d []byte) []byte {
			d = bsoncore.AppendInt64Element(d, "deletedDocuments", st.ttlDeleted.Load())
			return bsoncore.AppendInt64Element(d, "passes", st.ttlPasses.Load())
		})
		d = subdoc(d, "operation", func(d []byte) []byte {
			d = bsoncore.AppendInt64Element(d, "scanAndOrder", st.scanAndOrder.Load())
			return bsoncore.AppendInt64Element(d, "writeConflicts", st.writeConflicts.Load())
		})
		return subdoc(d, "queryExecutor", func(d []byte) []byte {
			d = bsoncore.AppendInt64Element(d, "scanned", st.keysExamined.Load())
			return bsoncore.AppendInt64Element(d, "scannedObjects", st.docsExamined.Load())
		})
	})
}

func statusNetwork(c *clientConn, d []byte) []byte {
	st := &c.s.stats
	return subdoc(d, "network", func(d []byte) []byte {
		d = bsoncore.AppendInt64Element(d, "bytesIn", st.bytesIn.Load())
		d = bsoncore.AppendInt64Element(d, "bytesOut", st.bytesOut.Load())
		d = bsoncore.AppendInt64Element(d, "physicalBytesIn", st.bytesIn.Load())
		d = bsoncore.AppendInt64Element(d, "physicalBytesOut", st.bytesOut.Load())
		d = bsoncore.AppendInt64Element(d, "numSlowDNSOperations", 0)
		d = bsoncore.AppendInt64Element(d, "numSlowSSLOperations", 0)
		return bsoncore.AppendInt64Element(d, "numRequests", st.numRequests.Load())
	})
}

func statusOpLatencies(c *clientConn, d []byte) []byte {
	st := &c.s.stats
	return subdoc(d, "opLatencies", func(d []byte) []byte {
		for i, name := range []string{"commands", "reads", "writes"} {
			class := []int{latencyCommands, latencyReads, latencyWrites}[i]
			d = subdoc(d, name, func(d []byte) []byte {
				d = bsoncore.AppendInt64Element(d, "latency", st.latency[class].micros.Load())
				return bsoncore.AppendInt64Element(d, "ops", st.latency[class].ops.Load())
			})
		}
		return d
	})
}

func statusOpcounters(c *clientConn, d []byte) []byte {
	st := &c.s.stats
	return subdoc(d, "opcounters", func(d []byte) []byte {
		d = bsoncore.AppendInt64Element(d, "insert", st.opInsert.Load())
		d = bsoncore.AppendInt64Element(d, "query", st.opQuery.Load())
		d = bsoncore.AppendInt64Element(d, "update", st.opUpdate.Load())
		d = bsoncore.AppendInt64Element(d, "delete", st.opDelete.Load())
		d = bsoncore.AppendInt64Element(d, "getmore", st.opGetMore.Load())
		return bsoncore.AppendInt64Element(d, "command", st.opCommand.Load())
	})
}

func statusStorageEngine(c *clientConn, d []byte) []byte {
	return subdoc(d, "storageEngine", func(d []byte) []byte {
		d = bsoncore.AppendStringElement(d, "name", "wiredTiger")
		d = bsoncore.AppendBooleanElement(d, "supportsCommittedReads", true)
		d = bsoncore.AppendBooleanElement(d, "supportsPendingDrops", false)
		d = bsoncore.AppendInt64Element(d, "dropPendingIdents", 0)
		d = bsoncore.AppendBooleanElement(d, "supportsSnapshotReadConcern", false)
		d = bsoncore.AppendBooleanElement(d, "readOnly", false)
		d = bsoncore.AppendBooleanElement(d, "persistent", true)
		return bsoncore.AppendBooleanElement(d, "backupCursorOpen", false)
	})
}

func statusWiredTiger(c *clientConn, d []byte) []byte {
	stats, err := c.sess.WT().Stats("statistics:")
	if err != nil {
		return d
	}
	return appendWTStats(d, "wiredTiger", "statistics:", stats, func(d []byte) []byte {
		return appendConcurrentTransactions(c, d)
	})
}

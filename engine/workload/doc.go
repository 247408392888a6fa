// Package workload owns the load and workload generator that wtd drives a
// server with: bulk loads of incompressible documents (Load), and
// workloads (Run) of reads, updates, inserts, scans, read-modify-writes and
// queries over a key space, with their key distributions (uniform,
// zipfian, YCSB's scrambled zipfian, latest, hotspot), the YCSB presets,
// threads, an open loop at a rate or a schedule of rates with latencies
// corrected for coordinated omission, a warm-up, a per-second series,
// watched serverStatus fields, the latency histograms and statistics, the
// knee rule of a thread sweep, and the defaults a workload takes from the
// loads before it and from collStats (Complete).
//
// It knows nothing of runs, steps or how a server is started: a caller
// passes a connected *mongo.Client and, in Hooks, what it wants told
// (progress, status) and how to tell that the server went down. The
// engine package wraps it for the servers of a run.
package workload

// Package engine carries out wtd's experiments without Lua: runs and their
// steps, the servers a run starts or attaches to (and the watch that tells
// when one goes down), the changes a run makes and their restore, the
// sampler that records serverStatus and host metrics, server-side deltas
// and cache-state provenance. What a step records is engine/record's
// StepRecord, which the read side (show, report, compare) reads back; what
// m:command may send is engine/cmdpolicy's, mongod's config file
// engine/mongodconf's. Loads and workloads run on a run's
// servers through Server.Load and Server.Workload, which wrap the
// generator of engine/workload. Playbooks reach it through luabind; Go
// callers use it directly.
package engine

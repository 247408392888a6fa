// Package engine carries out wtd's experiments without Lua: runs and their
// steps, data loads and workloads against a server, the sampler that records
// serverStatus and host metrics, server-side deltas, cache-state provenance
// and reports. Playbooks reach it through luabind; Go callers use it
// directly.
package engine

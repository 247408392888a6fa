// Package ftdc reads and writes MongoDB's FTDC files (Full-Time Diagnostic
// Data Capture): the metrics.* files every mongod and mongos since 3.2
// writes into diagnostic.data once a second. It owns the file format only:
// it knows nothing of runs, stores, engines or Lua, and what the metrics
// mean is for its callers.
//
// # Reading
//
// Open takes a file or a diagnostic.data directory (its metrics.<time>-<n>
// files in name order, then metrics.interim); NewReader takes any
// io.Reader. Reader.Next returns one item at a time: a *Metadata (type 0,
// or type 2), a *Chunk (type 1, decoded) or a Skip, until io.EOF. The
// reader holds one document and one decoded chunk at a time, whatever the
// number of files, and reuses their buffers: a Chunk is valid until the
// next call (Chunk.Clone keeps one). It never panics on any input (see
// FuzzReader and FuzzChunk) and drops nothing silently: a truncated last
// document, a chunk that does not decode, a file it cannot open, an entry
// of the directory that is not a metrics file are each a Skip with the
// file, the offset and the reason. It does not reorder or deduplicate: a
// chunk whose _id goes back in time (the previous process's interim chunk,
// written again after a restart) comes where it is in the file.
//
// # Writing
//
// Writer writes as mongod does: WriteMetadata for a type-0 document,
// WriteMetadataDelta for a type-2 one, and Add for each sample (a whole
// document, bson.Raw or bson.D). Samples go into the open chunk until it
// holds SamplesPerChunk (300 by default) or a sample's schema differs from
// the chunk's reference; then the chunk is written and the next starts.
// WriteInterimFile rewrites metrics.interim with the open chunk. Dir runs
// a whole diagnostic.data directory on top of a Writer, as mongod's file
// manager does: archive files named metrics.<UTC time>-<n>, each starting
// with a metadata document, the interim file every few samples, rotation
// by file size, the oldest files removed over the directory's size, and a
// previous process's interim chunk written into the next archive file.
//
// # The format, as the real files show it
//
// A file is a run of BSON documents {_id: Date, type: int32, ...}; a file
// being written may end inside one. Three types exist:
//
//   - 0, metadata: doc holds {start, buildInfo, getCmdLineOpts, hostInfo,
//     end} and, depending on the version, getDefaultRWConcern,
//     sysMaxOpenFiles, ulimits. On 8.0 sharded members and mongos doc is
//     {start, common: {...}, end}.
//   - 1, a metric chunk: data is BinData (subtype 0) of a uint32
//     little-endian length, then a zlib stream of exactly that many bytes:
//     the reference document, a uint32 metric count, a uint32 delta count
//     (samples minus one), then the deltas.
//   - 2, periodic metadata (8.0 on): count is 0 for a whole document, then
//     1, 2, ... for documents holding only the sections that changed
//     (getParameter, getClusterParameter; in the 8.0 sharded layout under
//     shard and router).
//
// The reference document is the chunk's first sample, whole. Its metrics
// are its numeric leaves in document order: double, int32, int64 and
// decimal128 (all as int64: doubles lose their fraction, NaN is 0, doubles
// beyond the int64 range are its ends; decimals round half to even),
// booleans (0 or 1), dates (Unix milliseconds) and timestamps, which count
// twice: seconds, then increment (named PATH and PATH.inc here). Nested
// documents and arrays are walked in place, array elements named by their
// index ("members.0.uptime"); strings and other types are passed over. The
// metric count must equal the number of these leaves; the reader checks
// it first. Each collector's section is {start: Date, ..., end: Date}, and
// the whole sample is too; sample times here are serverStatus.start, or
// the top-level start when there is no serverStatus, or the chunk's _id.
//
// The deltas follow metric by metric: for each metric, delta count unsigned
// LEB128 varints, each the difference (uint64, wrapping) from the sample
// before; a sample's value is the reference value plus the sum of its
// deltas. A zero delta is written as 0 followed by a varint k, standing for
// k+1 zeros, and a run of zeros does not stop at the end of a metric: it
// goes on into the next ones (one run often covers the ends and starts of
// many constant metrics). The last run is written after the last metric.
// The stream ends exactly at the end of the zlib data: every chunk of the
// 18 real files in testdata, 3.2.6 to 8.2.6, decodes so, with no byte left
// and no zero left over.
//
// mongod's own src/mongo/db/ftdc/README.md differs from the files in four
// places: the chunk's BinData field is "data", not "doc"; the metric count
// comes before the delta count, not after; a zero run [0, k] stands for
// k+1 zeros, not k; and the type-2 document's counter is "count", not
// "index".
//
// Layouts of the reference document: up to 7.0, {start, serverStatus,
// [replSetGetStatus, local.oplog.rs.stats], [connPoolStats (mongos)],
// [transportLayerStats], [systemMetrics], end}; from 8.0 on a replica set
// member without sharding, the replication sections come before
// serverStatus; from 8.0 on sharded members and mongos, {start, shard:
// {...}, router: {...}, common: {serverStatus, transportLayerStats,
// systemMetrics}, end}. Chunk.Paths are the dotted paths as they are;
// Chunk.Names drop the role of the sharded layout, so that
// "common.serverStatus.uptime" is "serverStatus.uptime" as in every other
// layout (a collector found under two roles keeps its role the second
// time). The role sections' own start and end keep theirs
// ("common.start").
//
// A new chunk starts when the schema changes: mongod compares each sample
// with the reference, field by field among the types above (names, order
// and type, all numbers being one type), so a metric appearing or
// disappearing, or a string turning into a number, starts a chunk; the
// metric count changes between chunks in most real files. mongod also
// writes metrics.interim with the open chunk every few samples, replacing
// it; after a restart it writes the previous process's interim chunk into
// the new archive file, after the new type-0 document.
package ftdc

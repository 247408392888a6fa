// Package fleet is wtd's central results store: many hosts' runs pushed to
// one MongoDB deployment, and read back across hosts. Each host's SQLite
// database stays the local record; Push copies a finished run there in
// the one run shape (record.View: the run, its servers, steps with
// provenance and results, events, changes and files' metadata) with its
// samples as the store's own frames (store.Frames, as BinData, one
// document per source per block). Every document's _id derives from the
// host id (store.HostID) and the run id, so that a run is unique across
// the fleet and a push repeated after a crash writes nothing twice.
//
// The outbox (store.QueuePush) keeps what the central store has not yet
// acknowledged; PushDue drains it with exponential backoff, and is what
// the daemon's pusher and wtd push call. Nothing here runs while a run
// goes on: a results store that is down or slow never fails or slows one.
//
// The results URI is an output, not an experiment target: unlike the
// servers a playbook tunes (hostctl.CheckURI, loopback only) it may name
// other hosts, a replica set or mongodb+srv://, and its TLS options pass
// through (CheckURI). Its password is never logged or recorded
// (store.RedactURI), and may come from a file instead (Config.TokenFile).
package fleet

// Package autotune owns a tune{} search on a real server: the search space
// from the knob table (hostctl.Knobs: names, ranges, types, the rules
// between knobs), each trial's settings put on the server (a restart for a
// knob that needs one, reconfigure or setParameter for the others), the
// workload run as a recorded step "trial N" labelled with the settings,
// the objective read from that step as wtd compare reads it, the guards
// that stop a trial whose p99 explodes, whose load falls behind its rate or
// whose server goes down (the trial is recorded failed and told to the
// optimiser as infeasible), and at the end confirmation rounds of the best
// setting against the baseline, by turns, judged by compare's statistics.
//
// The optimiser itself is engine/tune (no server, no store); this package
// is what connects it to a run. Every trial and the verdict are events of
// the run (record.SourceTune), so wtd show and wtd report list them from
// the database alone. The server is left with the settings it had before
// the search, unless KeepBest keeps a confirmed better setting.
package autotune

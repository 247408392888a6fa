package compare

import (
	"wtd/engine/record"
)

// HostRuns are one host's runs of a playbook for a history, oldest first.
type HostRuns struct {
	Host, HostID string
	Runs         []*record.Record
	// Skipped counts the host's ok runs left out because their
	// parameters differ from its newest run's.
	Skipped int
}

// HostHistory is the history of one host.
type HostHistory struct {
	Host   string `json:"host"`
	HostID string `json:"host_id"`
	*History
}

// HostsHistory is a playbook's history across hosts: a measure of each
// step across each host's runs, with each host's own change points.
type HostsHistory struct {
	Playbook string        `json:"playbook"`
	Measure  string        `json:"measure"`
	Alpha    float64       `json:"alpha"`
	MinRuns  int           `json:"min_runs"`
	Hosts    []HostHistory `json:"hosts"`
}

// BuildHostsHistory follows opt.Measure of every step across each host's
// runs and finds the change points of each host apart: a change on one
// host is not diluted by the others, nor is a difference between hosts
// taken for a change.
func BuildHostsHistory(playbook string, hosts []HostRuns, opt HistoryOptions) (*HostsHistory, error) {
	m, err := measureNamed(opt.Measure)
	if err != nil {
		return nil, err
	}
	out := &HostsHistory{Playbook: playbook, Measure: m.name, Hosts: []HostHistory{}}
	for _, hr := range hosts {
		runs := hr.Runs
		if opt.Limit > 0 && len(runs) > opt.Limit {
			runs = runs[len(runs)-opt.Limit:]
		}
		refs := make([]RunRef, len(runs))
		steps := make([][]record.StepRecord, len(runs))
		for i, rec := range runs {
			refs[i] = refOf(rec)
			steps[i] = rec.Steps
		}
		h := BuildHistory(refs, steps, m, opt)
		h.Playbook, h.Skipped = playbook, hr.Skipped
		out.Alpha, out.MinRuns = h.Alpha, h.MinRuns
		out.Hosts = append(out.Hosts, HostHistory{Host: hr.Host, HostID: hr.HostID, History: h})
	}
	if len(out.Hosts) == 0 {
		h := BuildHistory(nil, nil, m, opt)
		out.Alpha, out.MinRuns = h.Alpha, h.MinRuns
	}
	return out, nil
}

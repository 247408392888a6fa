package web

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"wtd/compare"
	"wtd/fleet"
)

// fleetRuns bounds the runs the fleet page reads, newest first.
const fleetRuns = 2000

// fleetTimeout bounds the fleet page's reads of the results store.
const fleetTimeout = 10 * time.Second

type fleetRow struct {
	Host, HostID, Playbook      string
	Key, Started, Status, Title string
	Verdict                     *compare.RunVerdict
	Runs                        int // of this host and playbook, among those read
}

type fleetPage struct {
	page
	Dest       string // the results store, without password ("": none configured)
	Error      string
	Hosts, Len int
	Rows       []fleetRow
	// CompareForm is the form comparing two runs of the results store.
	CompareForm fleetComparePage
}

// fleetPage is GET /fleet: each host of the results store with the
// last run of each of its playbooks and that run's verdict.
func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	p := fleetPage{page: newPage("Fleet", "fleet")}
	cfg := s.opts.Results
	if cfg.URI == "" {
		render(w, http.StatusOK, "fleet", p)
		return
	}
	p.Dest = cfg.Dest()
	ctx, cancel := context.WithTimeout(r.Context(), fleetTimeout)
	defer cancel()
	runs, err := listFleet(ctx, cfg)
	if err != nil {
		p.Error = err.Error()
		render(w, http.StatusBadGateway, "fleet", p)
		return
	}
	p.Len = len(runs)
	index := map[[2]string]int{}
	hosts := map[string]bool{}
	for _, fr := range runs { // newest first: the first of a host and playbook is its last
		k := [2]string{fr.HostID, fleet.PlaybookName(fr.Run.Playbook)}
		hosts[fr.HostID] = true
		if i, ok := index[k]; ok {
			p.Rows[i].Runs++
			continue
		}
		row := fleetRow{Host: fr.Host, HostID: fr.HostID, Playbook: k[1], Key: fr.Key, Started: localTime(fr.Run.StartedAt),
			Status: fr.Run.Status, Runs: 1}
		if fr.Run.Reason != nil {
			row.Title = *fr.Run.Reason
		}
		if len(fr.Run.Verdict) > 0 && string(fr.Run.Verdict) != "null" {
			var v compare.RunVerdict
			if json.Unmarshal(fr.Run.Verdict, &v) == nil {
				row.Verdict = &v
			}
		}
		index[k] = len(p.Rows)
		p.Rows = append(p.Rows, row)
	}
	p.Hosts = len(hosts)
	sort.SliceStable(p.Rows, func(i, j int) bool {
		a, b := p.Rows[i], p.Rows[j]
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.HostID != b.HostID {
			return a.HostID < b.HostID
		}
		return a.Playbook < b.Playbook
	})
	render(w, http.StatusOK, "fleet", p)
}

// listFleet reads the newest runs of the results store.
func listFleet(ctx context.Context, cfg fleet.Config) ([]fleet.FleetRun, error) {
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer sink.Close(context.WithoutCancel(ctx))
	return sink.List(ctx, fleet.Filter{Limit: fleetRuns})
}

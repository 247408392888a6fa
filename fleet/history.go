package fleet

import (
	"context"
	"fmt"

	"wtd/engine/record"
	"wtd/engine/store"
)

// HostRecords are one host's ok runs of a playbook with the parameters
// of its newest ok run, oldest first: what a history of that host follows.
type HostRecords struct {
	Host, HostID string
	Records      []*record.Record
	// Skipped counts the host's ok runs left out because their
	// parameters differ from its newest run's.
	Skipped int
}

// PlaybookRecords reads, host by host (host: a host id or name; "" every
// host), the ok runs of playbook that have the parameters of that host's
// newest ok run, the newest limit of them (0: all). Hosts come in the
// order of their newest run, newest first.
func (s *Sink) PlaybookRecords(ctx context.Context, playbook, host string, limit int) ([]HostRecords, error) {
	runs, err := s.List(ctx, Filter{Host: host, Playbook: playbook, Status: store.StatusOK})
	if err != nil {
		return nil, err
	}
	var out []HostRecords
	index := map[string]int{}
	var newest []map[string]any
	var picked [][]FleetRun
	for _, r := range runs { // newest first
		i, ok := index[r.HostID]
		if !ok {
			i = len(out)
			index[r.HostID] = i
			out = append(out, HostRecords{Host: r.Host, HostID: r.HostID})
			newest = append(newest, r.Run.Params)
			picked = append(picked, nil)
		}
		switch {
		case !store.SameParams(r.Run.Params, newest[i]):
			out[i].Skipped++
		case limit <= 0 || len(picked[i]) < limit:
			picked[i] = append(picked[i], r)
		}
	}
	for i, list := range picked {
		for j := len(list) - 1; j >= 0; j-- {
			rec, err := s.Record(ctx, list[j])
			if err != nil {
				return nil, fmt.Errorf("history of %s: %w", playbook, err)
			}
			out[i].Records = append(out[i].Records, rec)
		}
	}
	return out, nil
}

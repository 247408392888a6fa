package fleet

import (
	"context"
	"encoding/json"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/engine/record"
	"wtd/engine/store"
)

// FleetRun is a run as the results store lists it.
type FleetRun struct {
	UUID   string     `json:"uuid"`
	HostID string     `json:"host_id"`
	Host   string     `json:"host"` // the host's name
	Key    string     `json:"key"`  // HOSTID:RUN
	Steps  int        `json:"steps"`
	Events int        `json:"events"`
	Frames int        `json:"frames"`
	Run    record.Run `json:"run"`
}

// Filter selects runs of the results store.
type Filter struct {
	Host     string // a host id or a host name; "" all
	Playbook string // a playbook's name (its file name without .lua); "" all
	Limit    int    // 0: all
}

// List returns the runs of the results store f selects, newest first.
func (s *Sink) List(ctx context.Context, f Filter) ([]FleetRun, error) {
	q := bson.D{}
	if f.Host != "" {
		q = append(q, bson.E{Key: "$or", Value: bson.A{bson.D{{Key: "host_id", Value: f.Host}}, bson.D{{Key: "host", Value: f.Host}}}})
	}
	if f.Playbook != "" {
		q = append(q, bson.E{Key: "playbook", Value: PlaybookName(f.Playbook)})
	}
	opts := options.Find().SetSort(bson.D{{Key: "started_at", Value: -1}}).
		SetProjection(bson.D{{Key: "host_id", Value: 1}, {Key: "host", Value: 1}, {Key: "key", Value: 1}, {Key: "steps", Value: 1},
			{Key: "events", Value: 1}, {Key: "frames", Value: 1}, {Key: "run", Value: 1}})
	if f.Limit > 0 {
		opts.SetLimit(int64(f.Limit))
	}
	cur, err := s.db.Collection(RunsCollection).Find(ctx, q, opts)
	if err != nil {
		return nil, fmt.Errorf("list the runs of the results store: %s", store.RedactURI(err.Error()))
	}
	defer cur.Close(ctx)
	var out []FleetRun
	for cur.Next(ctx) {
		r, err := fleetRun(cur.Current)
		if err != nil {
			return nil, fmt.Errorf("list the runs of the results store: %w", err)
		}
		out = append(out, r)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("list the runs of the results store: %s", store.RedactURI(err.Error()))
	}
	return out, nil
}

// fleetRun reads a run's document back through its JSON: the view's one
// shape.
func fleetRun(doc bson.Raw) (FleetRun, error) {
	b, err := bson.MarshalExtJSON(doc, false, false)
	if err != nil {
		return FleetRun{}, err
	}
	var r FleetRun
	var id struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return FleetRun{}, err
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return FleetRun{}, err
	}
	r.UUID = id.ID
	return r, nil
}

package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

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
	Status   string // ok, failed or aborted; "" all
	Since    time.Time
	Before   time.Time // runs started before it; zero: any
	Limit    int       // 0: all
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
	if f.Status != "" {
		q = append(q, bson.E{Key: "status", Value: f.Status})
	}
	started := bson.D{}
	if !f.Since.IsZero() {
		started = append(started, bson.E{Key: "$gte", Value: bson.NewDateTimeFromTime(f.Since)})
	}
	if !f.Before.IsZero() {
		started = append(started, bson.E{Key: "$lt", Value: bson.NewDateTimeFromTime(f.Before)})
	}
	if len(started) > 0 {
		q = append(q, bson.E{Key: "started_at", Value: started})
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

// ErrNoRun reports a run the results store does not hold.
var ErrNoRun = errors.New("no such run in the results store")

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsRunRef reports whether ref names a run of the results store, as Find
// takes it: a UUID, or HOST:RUN with a run id (optionally @STEP after
// it). "12", "latest" and "latest:cache_sweep" name a host's own runs.
func IsRunRef(ref string) bool {
	if at := strings.IndexByte(ref, '@'); at > 0 {
		ref = ref[:at]
	}
	if uuidPattern.MatchString(ref) {
		return true
	}
	i := strings.LastIndexByte(ref, ':')
	id, err := strconv.ParseInt(ref[i+1:], 10, 64)
	return i > 0 && err == nil && id >= 1
}

// Find returns the run ref names: its UUID, or HOST:RUN where HOST is a
// host id or a host's name (the newest such run, should a host have used
// the id twice).
func (s *Sink) Find(ctx context.Context, ref string) (FleetRun, error) {
	var q bson.D
	if uuidPattern.MatchString(ref) {
		q = bson.D{{Key: "_id", Value: ref}}
	} else {
		i := strings.LastIndexByte(ref, ':')
		id, err := strconv.ParseInt(ref[i+1:], 10, 64)
		if i <= 0 || err != nil || id < 1 {
			return FleetRun{}, fmt.Errorf("run %q: want HOST:RUN (a host id or name, and a run id) or a run's UUID", ref)
		}
		host := ref[:i]
		q = bson.D{{Key: "run_id", Value: id},
			{Key: "$or", Value: bson.A{bson.D{{Key: "host_id", Value: host}}, bson.D{{Key: "host", Value: host}}}}}
	}
	cur, err := s.db.Collection(RunsCollection).Find(ctx, q, options.Find().SetSort(bson.D{{Key: "started_at", Value: -1}}).SetLimit(1))
	if err != nil {
		return FleetRun{}, fmt.Errorf("find run %s in the results store: %s", ref, store.RedactURI(err.Error()))
	}
	defer cur.Close(ctx)
	if !cur.Next(ctx) {
		if err := cur.Err(); err != nil {
			return FleetRun{}, fmt.Errorf("find run %s in the results store: %s", ref, store.RedactURI(err.Error()))
		}
		return FleetRun{}, fmt.Errorf("run %s: %w", ref, ErrNoRun)
	}
	return fleetRun(cur.Current)
}

// PreviousOK returns the baseline of run r in the results store, as a
// host's own results database finds it (store.PreviousOK): the last ok
// run of r's host started before r, of the same playbook with the same
// parameters, one of the same playbook file first. None gives an error
// wrapping ErrNoRun.
func (s *Sink) PreviousOK(ctx context.Context, r FleetRun) (FleetRun, error) {
	name := PlaybookName(r.Run.Playbook)
	cands, err := s.List(ctx, Filter{Host: r.HostID, Playbook: name, Status: store.StatusOK, Before: r.Run.StartedAt})
	if err != nil {
		return FleetRun{}, err
	}
	// Host matches a name too: keep r's host's runs only.
	cands = slices.DeleteFunc(cands, func(c FleetRun) bool { return c.HostID != r.HostID })
	if c, ok := store.PickBaseline(cands, r.Run.Playbook, r.Run.Params, func(c FleetRun) (string, map[string]any) { return c.Run.Playbook, c.Run.Params }); ok {
		return c, nil
	}
	return FleetRun{}, fmt.Errorf("no earlier ok run of %s on host %s with the same parameters as run %s: %w", name, r.HostID, r.Key, ErrNoRun)
}

// View reads run r back from the results store in the one run shape, as
// wtd show --json of its host printed it when it was pushed.
func (s *Sink) View(ctx context.Context, r FleetRun) (record.View, error) {
	return s.view(ctx, r, true)
}

// Record reads run r back from the results store as the Record compare
// and history start from (record.FromView): its run, servers and steps
// with their results and per-second series, not its events.
func (s *Sink) Record(ctx context.Context, r FleetRun) (*record.Record, error) {
	v, err := s.view(ctx, r, false)
	if err != nil {
		return nil, err
	}
	rec := record.FromView(v)
	rec.Key = r.Key
	return rec, nil
}

// view reads run r; its events (the view's output) only withOutput.
func (s *Sink) view(ctx context.Context, r FleetRun, withOutput bool) (record.View, error) {
	var doc bson.Raw
	if err := s.db.Collection(RunsCollection).FindOne(ctx, bson.D{{Key: "_id", Value: r.UUID}}).Decode(&doc); err != nil {
		return record.View{}, fmt.Errorf("read run %s: %s", r.Key, store.RedactURI(err.Error()))
	}
	parts := map[string]json.RawMessage{}
	for _, key := range []string{"run", "servers", "changes", "files", "samples", "tables", "tunings", "thresholds"} {
		b, err := rawJSON(doc.Lookup(key))
		if err != nil {
			return record.View{}, fmt.Errorf("read run %s: %s: %w", r.Key, key, err)
		}
		parts[key] = b
	}
	parts["output"] = json.RawMessage("[]")
	for coll, key := range map[string]string{StepsCollection: "steps", EventsCollection: "output"} {
		if coll == EventsCollection && !withOutput {
			continue
		}
		order := "seq"
		if coll == EventsCollection {
			order = "n"
		}
		cur, err := s.db.Collection(coll).Find(ctx, bson.D{{Key: "run", Value: r.UUID}}, options.Find().SetSort(bson.D{{Key: order, Value: 1}}))
		if err != nil {
			return record.View{}, fmt.Errorf("read the %s of run %s: %s", key, r.Key, store.RedactURI(err.Error()))
		}
		list := []json.RawMessage{}
		for cur.Next(ctx) {
			b, err := bson.MarshalExtJSON(cur.Current, false, false)
			if err != nil {
				cur.Close(ctx)
				return record.View{}, err
			}
			list = append(list, b)
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return record.View{}, fmt.Errorf("read the %s of run %s: %s", key, r.Key, store.RedactURI(err.Error()))
		}
		if parts[key], err = json.Marshal(list); err != nil {
			return record.View{}, err
		}
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return record.View{}, err
	}
	var v record.View
	if err := json.Unmarshal(b, &v); err != nil {
		return record.View{}, fmt.Errorf("read run %s: %w", r.Key, err)
	}
	return v, nil
}

// rawJSON is a BSON value as relaxed extended JSON: the JSON it was made
// from (bsonValue).
func rawJSON(v bson.RawValue) (json.RawMessage, error) {
	if v.Type == 0 {
		return json.RawMessage("null"), nil
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return nil, err
	}
	var wrap struct{ V json.RawMessage }
	if err := json.Unmarshal(b, &wrap); err != nil {
		return nil, err
	}
	return wrap.V, nil
}

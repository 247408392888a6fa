package fleet

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/engine/record"
	"wtd/engine/store"
)

// Stats say what a push wrote.
type Stats struct {
	Docs     int   // documents sent
	Inserted int   // of them, new in the store
	Modified int   // of them, replacing a different one
	Bytes    int64 // their BSON size
	Frames   int   // frame documents the run has
	Skipped  int   // of them, already in the store (not sent again)
}

func (s *Stats) add(o Stats) {
	s.Docs += o.Docs
	s.Inserted += o.Inserted
	s.Modified += o.Modified
	s.Bytes += o.Bytes
	s.Frames += o.Frames
	s.Skipped += o.Skipped
}

// RunKey is how a run is named across the fleet: HOSTID:RUN.
func RunKey(hostID string, runID int64) string { return hostID + ":" + strconv.FormatInt(runID, 10) }

// uuidSpace is the namespace of run UUIDs (a name-based UUID, RFC 9562
// version 5, of the run's key and start).
var uuidSpace = [16]byte{0x5c, 0x1f, 0x2e, 0x8a, 0x77, 0x4b, 0x4d, 0x0e, 0x9a, 0x61, 0x0b, 0x3d, 0x52, 0xe4, 0x6f, 0x10}

// RunUUID is a run's id in the results store, derived from its host id, its
// id and its start: the same on every push, and different for a run that
// reuses the id of one deleted before it (SQLite may give it again).
func RunUUID(hostID string, runID int64, started time.Time) string {
	h := sha1.New()
	h.Write(uuidSpace[:])
	h.Write([]byte(RunKey(hostID, runID) + ":" + strconv.FormatInt(started.UnixNano(), 10)))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// PlaybookName is the name the results store keeps a playbook by: its
// file name without .lua.
func PlaybookName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".lua")
}

// batchDocs bounds the documents of one bulk write.
const batchDocs = 64

// Push copies run id of st to the results store: frames first (those the
// store has are not sent again: a run's samples do not change once it
// ended), then its metric names, steps and output, and the run's document
// last, so that a run listed there is complete. Every document replaces
// the one with its _id: a push repeated writes nothing twice. A run that
// goes on is refused.
func (s *Sink) Push(ctx context.Context, st *store.Store, id int64) (Stats, error) {
	var stats Stats
	hostID, err := st.HostID(ctx)
	if err != nil {
		return stats, err
	}
	rec, err := record.Load(ctx, st, id)
	if err != nil {
		return stats, fmt.Errorf("push run %d: %w", id, err)
	}
	if rec.Run.EndedAt.IsZero() {
		return stats, fmt.Errorf("push run %d: it goes on; it is pushed when it ends", id)
	}
	uuid := RunUUID(hostID, id, rec.Run.StartedAt)
	keys := bson.D{{Key: "run", Value: uuid}, {Key: "host_id", Value: hostID}, {Key: "run_id", Value: id}}
	dict, err := s.pushFrames(ctx, st, id, uuid, keys, &stats)
	if err != nil {
		return stats, fmt.Errorf("push run %d: %w", id, err)
	}
	v := rec.View()
	v.Run.Push = nil // the host's outbox, not part of the run
	var steps []bson.Raw
	for _, step := range v.Steps {
		d, err := docOf(uuid+"/step/"+strconv.Itoa(step.Seq), keys, step)
		if err != nil {
			return stats, fmt.Errorf("push run %d: step %d: %w", id, step.Seq, err)
		}
		steps = append(steps, d)
	}
	if err := s.write(ctx, StepsCollection, steps, &stats); err != nil {
		return stats, fmt.Errorf("push run %d: %w", id, err)
	}
	var events []bson.Raw
	for n, ev := range v.Output {
		d, err := docOf(uuid+"/event/"+strconv.Itoa(n), append(keys, bson.E{Key: "n", Value: n}), ev)
		if err != nil {
			return stats, fmt.Errorf("push run %d: event %d: %w", id, n, err)
		}
		events = append(events, d)
	}
	if err := s.write(ctx, EventsCollection, events, &stats); err != nil {
		return stats, fmt.Errorf("push run %d: %w", id, err)
	}
	runDoc, err := s.runDoc(hostID, uuid, dict, rec, v, stats)
	if err != nil {
		return stats, fmt.Errorf("push run %d: %w", id, err)
	}
	if err := s.write(ctx, RunsCollection, []bson.Raw{runDoc}, &stats); err != nil {
		return stats, fmt.Errorf("push run %d: %w", id, err)
	}
	return stats, nil
}

// runDoc is the run's document: its keys, what the fleet is listed and
// filtered by, and the view's parts but steps and output (in their own
// collections).
func (s *Sink) runDoc(hostID, uuid, dict string, rec *record.Record, v record.View, stats Stats) (bson.Raw, error) {
	r := rec.Run
	d := bson.D{{Key: "_id", Value: uuid}, {Key: "host_id", Value: hostID}, {Key: "host", Value: r.OwnerHost}, {Key: "run_id", Value: r.ID},
		{Key: "key", Value: RunKey(hostID, r.ID)}, {Key: "playbook", Value: PlaybookName(r.PlaybookPath)}, {Key: "status", Value: r.Status},
		{Key: "started_at", Value: bson.NewDateTimeFromTime(r.StartedAt)}, {Key: "ended_at", Value: bson.NewDateTimeFromTime(r.EndedAt)},
		{Key: "steps", Value: len(v.Steps)}, {Key: "events", Value: len(v.Output)}, {Key: "frames", Value: stats.Frames},
		{Key: "metrics", Value: dict}}
	parts := []struct {
		key string
		val any
	}{{"run", v.Run}, {"servers", v.Servers}, {"changes", v.Changes}, {"files", v.Files}, {"samples", v.Samples},
		{"tables", v.Tables}, {"tunings", v.Tunings}, {"thresholds", v.Thresholds}}
	for _, p := range parts {
		val, err := bsonValue(p.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.key, err)
		}
		d = append(d, bson.E{Key: p.key, Value: val})
	}
	return bson.Marshal(d)
}

// pushFrames writes the run's frames the store lacks, and the names of
// their metric ids; it returns the names' dictionary.
func (s *Sink) pushFrames(ctx context.Context, st *store.Store, id int64, uuid string, keys bson.D, stats *Stats) (string, error) {
	have, err := s.frameIDs(ctx, uuid)
	if err != nil {
		return "", err
	}
	var batch []bson.Raw
	names, err := st.Frames(ctx, id, func(f store.Frame) error {
		stats.Frames++
		fid := uuid + "/" + f.Source + "/" + strconv.FormatInt(f.TS, 10)
		if have[fid] {
			stats.Skipped++
			return nil
		}
		d, err := bson.Marshal(append(bson.D{{Key: "_id", Value: fid}}, append(keys,
			bson.E{Key: "source", Value: f.Source}, bson.E{Key: "ts", Value: f.TS},
			bson.E{Key: "time", Value: bson.NewDateTimeFromTime(time.Unix(0, f.TS))},
			bson.E{Key: "keyframe", Value: f.Keyframe}, bson.E{Key: "samples", Value: f.Samples},
			bson.E{Key: "data", Value: bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: f.Data}})...))
		if err != nil {
			return err
		}
		if batch = append(batch, d); len(batch) == batchDocs {
			err, batch = s.write(ctx, FramesCollection, batch, stats), batch[:0]
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if err := s.write(ctx, FramesCollection, batch, stats); err != nil {
		return "", err
	}
	return s.pushNames(ctx, names, stats)
}

// pushNames writes the dictionary of the metric ids a run's frames hold,
// unless the store has it: it is named by its content (a sha256), so the
// runs of a host that record the same metrics share one.
func (s *Sink) pushNames(ctx context.Context, names map[int64]string, stats *Stats) (string, error) {
	ids := slices.Sorted(maps.Keys(names))
	list := make([]string, len(ids))
	h := sha256.New()
	for i, id := range ids {
		list[i] = names[id]
		fmt.Fprintf(h, "%d\x00%s\x00", id, list[i])
	}
	dict := "names:" + hex.EncodeToString(h.Sum(nil))
	n, err := s.db.Collection(MetricsCollection).CountDocuments(ctx, bson.D{{Key: "_id", Value: dict}})
	if err != nil {
		return "", fmt.Errorf("look up the metric names: %s", store.RedactURI(err.Error()))
	}
	if n > 0 {
		return dict, nil
	}
	d, err := bson.Marshal(bson.D{{Key: "_id", Value: dict}, {Key: "ids", Value: ids}, {Key: "names", Value: list}})
	if err != nil {
		return "", err
	}
	return dict, s.write(ctx, MetricsCollection, []bson.Raw{d}, stats)
}

// frameIDs are the _ids of the frames of run uuid the store has.
func (s *Sink) frameIDs(ctx context.Context, uuid string) (map[string]bool, error) {
	cur, err := s.db.Collection(FramesCollection).Find(ctx, bson.D{{Key: "run", Value: uuid}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read the frames the store has: %w", err)
	}
	defer cur.Close(ctx)
	have := map[string]bool{}
	for cur.Next(ctx) {
		if id, ok := cur.Current.Lookup("_id").StringValueOK(); ok {
			have[id] = true
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("read the frames the store has: %w", err)
	}
	return have, nil
}

// write replaces (or inserts) each of docs by its _id.
func (s *Sink) write(ctx context.Context, coll string, docs []bson.Raw, stats *Stats) error {
	if len(docs) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(docs))
	var size int64
	for i, d := range docs {
		models[i] = mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: d.Lookup("_id")}}).SetReplacement(d).SetUpsert(true)
		size += int64(len(d))
	}
	res, err := s.db.Collection(coll).BulkWrite(ctx, models, options.BulkWrite().SetOrdered(true))
	if err != nil {
		return fmt.Errorf("write %s: %s", coll, store.RedactURI(err.Error()))
	}
	stats.add(Stats{Docs: len(docs), Inserted: int(res.UpsertedCount), Modified: int(res.ModifiedCount), Bytes: size})
	return nil
}

// docOf is v (a part of record.View) as a document with _id and keys.
func docOf(id string, keys bson.D, v any) (bson.Raw, error) {
	val, err := bsonValue(v)
	if err != nil {
		return nil, err
	}
	d := append(bson.D{{Key: "_id", Value: id}}, keys...)
	if m, ok := val.(bson.D); ok {
		d = append(d, m...)
	}
	return bson.Marshal(d)
}

// bsonValue is v as its JSON (the view's one shape) says it, in BSON: an
// object a bson.D, an array a bson.A, numbers as int32, int64 or double.
func bsonValue(v any) (any, error) {
	b, err := json.Marshal(map[string]any{"v": v})
	if err != nil {
		return nil, err
	}
	var d bson.D
	if err := bson.UnmarshalExtJSON(b, false, &d); err != nil {
		return nil, err
	}
	return d[0].Value, nil
}

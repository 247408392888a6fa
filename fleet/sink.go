package fleet

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"wtd/engine/store"
)

// The collections of the results store.
const (
	RunsCollection    = "runs"    // one document a run: its view without steps and output, and its keys
	StepsCollection   = "steps"   // one a step
	EventsCollection  = "events"  // one a line of the run's output
	FramesCollection  = "frames"  // one a samples block of a source
	MetricsCollection = "metrics" // one a set of metric names: those of the ids in runs' frames, named by their sha256
)

// Sink is a connection to the central results store.
type Sink struct {
	cfg    Config
	client *mongo.Client
	db     *mongo.Database
	// Majority is true when the deployment is a replica set or a
	// sharded cluster: writes then wait for w: majority.
	Majority bool
}

// Open connects to the results store, learns whether it can acknowledge
// writes by a majority, and makes the indexes wtd reads with (a no-op
// when they are there).
func Open(ctx context.Context, cfg Config) (*Sink, error) {
	cfg = cfg.withDefaults()
	opts, err := clientOptions(cfg, false)
	if err != nil {
		return nil, err
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to the results store %s: %s", store.RedactURI(cfg.URI), store.RedactURI(err.Error()))
	}
	s := &Sink{cfg: cfg, client: client}
	if err := s.start(ctx); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("connect to the results store %s: %s", store.RedactURI(cfg.URI), store.RedactURI(err.Error()))
	}
	return s, nil
}

func (s *Sink) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var hello struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	if err := s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	s.Majority = hello.SetName != "" || hello.Msg == "isdbgrid"
	var dbOpts []options.Lister[options.DatabaseOptions]
	if s.Majority {
		dbOpts = append(dbOpts, options.Database().SetWriteConcern(writeconcern.Majority()))
	}
	s.db = s.client.Database(s.cfg.Database, dbOpts...)
	return s.ensureIndexes(ctx)
}

// indexes are the ones wtd reads the fleet with.
var indexes = map[string][]mongo.IndexModel{
	RunsCollection: {
		{Keys: bson.D{{Key: "host_id", Value: 1}, {Key: "playbook", Value: 1}, {Key: "started_at", Value: -1}},
			Options: options.Index().SetName("host_playbook_started")},
		{Keys: bson.D{{Key: "playbook", Value: 1}, {Key: "started_at", Value: -1}}, Options: options.Index().SetName("playbook_started")},
		{Keys: bson.D{{Key: "host", Value: 1}, {Key: "started_at", Value: -1}}, Options: options.Index().SetName("host_started")},
		{Keys: bson.D{{Key: "started_at", Value: -1}}, Options: options.Index().SetName("started")},
	},
	StepsCollection:  {{Keys: bson.D{{Key: "run", Value: 1}, {Key: "seq", Value: 1}}, Options: options.Index().SetName("run_seq")}},
	EventsCollection: {{Keys: bson.D{{Key: "run", Value: 1}, {Key: "n", Value: 1}}, Options: options.Index().SetName("run_n")}},
	FramesCollection: {{Keys: bson.D{{Key: "run", Value: 1}, {Key: "source", Value: 1}, {Key: "ts", Value: 1}},
		Options: options.Index().SetName("run_source_ts")}},
}

// ensureIndexes creates the indexes a collection lacks, by name. Only the
// missing ones are asked for: creating an index that exists again is a
// no-op for mongod, but not for every server that speaks its protocol
// (FerretDB 1.24 drops the connection).
func (s *Sink) ensureIndexes(ctx context.Context) error {
	for _, coll := range []string{RunsCollection, StepsCollection, EventsCollection, FramesCollection} {
		iv := s.db.Collection(coll).Indexes()
		specs, err := iv.ListSpecifications(ctx)
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Code == 26 { // NamespaceNotFound: no collection yet
			err = nil
		}
		if err != nil {
			return fmt.Errorf("list the indexes of %s: %w", coll, err)
		}
		have := map[string]bool{}
		for _, sp := range specs {
			have[sp.Name] = true
		}
		var missing []mongo.IndexModel
		for _, m := range indexes[coll] {
			if name := indexName(m); !have[name] {
				missing = append(missing, m)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if _, err := iv.CreateMany(ctx, missing); err != nil {
			return fmt.Errorf("create the indexes of %s: %w", coll, err)
		}
	}
	return nil
}

// indexName is the name an index model sets.
func indexName(m mongo.IndexModel) string {
	var o options.IndexOptions
	if m.Options != nil {
		for _, set := range m.Options.List() {
			set(&o)
		}
	}
	if o.Name == nil {
		return ""
	}
	return *o.Name
}

// Dest is the store in words, without password.
func (s *Sink) Dest() string { return s.cfg.Dest() }

// Database is the results store's database.
func (s *Sink) Database() *mongo.Database { return s.db }

// Close disconnects.
func (s *Sink) Close(ctx context.Context) error {
	return s.client.Disconnect(ctx)
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/workload"
)

// IndexKey is one field of an index key and its direction (1 or -1).
type IndexKey struct {
	Field string
	Dir   int
}

// IndexSpec is an index to create (createIndexes).
type IndexSpec struct {
	NS     string
	Keys   []IndexKey
	Name   string // "" means MongoDB's: field_dir joined by "_"
	Unique bool
	// ExpireAfterSeconds, when set, makes a TTL index: the TTL monitor
	// deletes a document once its date in the (single) key field is that
	// many seconds past.
	ExpireAfterSeconds *int64
	// Keep leaves the index in place after the run on a server wtd did
	// not start (keep = true); it is recorded as kept. Without it such an
	// index is dropped at the end of the run.
	Keep bool
}

// CreateIndex creates an index and returns its name; an index that exists
// with the same definition is not an error. On a server wtd did not start,
// an index of a name that does not exist yet is recorded first and dropped
// at the end of the run unless spec.Keep (see recordIndex).
func (s *Server) CreateIndex(ctx context.Context, spec IndexSpec) (string, error) {
	db, coll, name, ix, err := spec.document()
	if err != nil {
		return "", err
	}
	note := ""
	if !s.Started() {
		recorded, err := s.recordIndex(ctx, db, coll, name, ix, spec.Keep)
		switch {
		case err != nil:
			return "", err
		case !recorded:
			note = " (an index of that name was there before: no change)"
		case spec.Keep:
			note = " (keep = true: it stays after the run)"
		default:
			note = " (it is dropped at the end of the run)"
		}
	}
	if _, err := s.CommandDB(ctx, db, bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{ix}}}); err != nil {
		return "", fmt.Errorf("create index %s on %s: %w", name, spec.NS, err)
	}
	if opts := describeIndex(spec); opts != "" {
		note = " " + opts + note
	}
	s.run.Eventf("info", s.Name, "created index %s on %s%s", name, spec.NS, note)
	return name, nil
}

// Check checks the spec as CreateIndex does, without a server, and
// returns the index's name.
func (spec IndexSpec) Check() (string, error) {
	_, _, name, _, err := spec.document()
	return name, err
}

// document checks the spec and returns the createIndexes entry for it.
func (spec IndexSpec) document() (db, coll, name string, ix bson.D, err error) {
	db, coll, err = workload.SplitNS(spec.NS)
	if err != nil {
		return "", "", "", nil, fmt.Errorf("create index: %w", err)
	}
	if len(spec.Keys) == 0 {
		return "", "", "", nil, errors.New("create index: no key fields")
	}
	key := bson.D{}
	var parts []string
	for _, k := range spec.Keys {
		if k.Field == "" || (k.Dir != 1 && k.Dir != -1) {
			return "", "", "", nil, fmt.Errorf("create index on %s: key %q: %d: want a field name and 1 or -1", spec.NS, k.Field, k.Dir)
		}
		key = append(key, bson.E{Key: k.Field, Value: int32(k.Dir)})
		parts = append(parts, fmt.Sprintf("%s_%d", k.Field, k.Dir))
	}
	name = spec.Name
	if name == "" {
		name = strings.Join(parts, "_")
	}
	ix = bson.D{{Key: "key", Value: key}, {Key: "name", Value: name}}
	if spec.Unique {
		ix = append(ix, bson.E{Key: "unique", Value: true})
	}
	if e := spec.ExpireAfterSeconds; e != nil {
		if len(spec.Keys) != 1 || *e < 0 {
			return "", "", "", nil, fmt.Errorf("create index on %s: expireAfterSeconds needs a single-field key and a value >= 0", spec.NS)
		}
		ix = append(ix, bson.E{Key: "expireAfterSeconds", Value: *e})
	}
	return db, coll, name, ix, nil
}

func describeIndex(spec IndexSpec) string {
	var opts []string
	if spec.Unique {
		opts = append(opts, "unique")
	}
	if spec.ExpireAfterSeconds != nil {
		opts = append(opts, fmt.Sprintf("expireAfterSeconds %d", *spec.ExpireAfterSeconds))
	}
	return strings.Join(opts, ", ")
}

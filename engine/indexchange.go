package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
)

// MongoDB's error codes the restore of an index tells apart.
const (
	codeNamespaceNotFound = 26
	codeIndexNotFound     = 27
)

// recordIndex records, before it is made, the index ix (named name) that
// CreateIndex is about to create on db.coll of a server wtd did not start,
// to be dropped at the end of the run unless keep. An index of that name
// that exists already is no change (createIndexes leaves it, or fails):
// nothing is recorded. It reports whether it recorded the index.
func (s *Server) recordIndex(ctx context.Context, db, coll, name string, ix bson.D, keep bool) (bool, error) {
	ns := db + "." + coll
	colls, err := s.Client().Database(db).ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll}})
	if err != nil {
		return false, fmt.Errorf("create index %s on %s: look for the collection before: %w", name, ns, err)
	}
	if len(colls) > 0 {
		specs, err := s.Client().Database(db).Collection(coll).Indexes().ListSpecifications(ctx)
		if err != nil {
			return false, fmt.Errorf("create index %s on %s: list its indexes before: %w", name, ns, err)
		}
		for _, sp := range specs {
			if sp.Name == name {
				return false, nil
			}
		}
	}
	spec, err := bson.MarshalExtJSON(ix, false, false)
	if err != nil {
		return false, fmt.Errorf("create index %s on %s: %w", name, ns, err)
	}
	change, _ := json.Marshal(record.IndexChange{Name: name, Spec: string(spec), CollectionCreated: len(colls) == 0})
	info, _ := json.Marshal(restoreInfo{URI: redact(s.uri)})
	if _, err := s.run.cfg.Store.AddChange(ctx, store.Change{RunID: s.run.ID, Server: s.Name, Kind: store.ChangeIndex,
		Target: ns, Change: string(change), Restore: string(info), Keep: keep}); err != nil {
		return false, fmt.Errorf("create index %s on %s: record the change before making it: %w", name, ns, err)
	}
	return true, nil
}

// restoreIndex drops an index the run made; an index or collection that is
// gone already is not an error (the detail says so). A collection the
// index created is dropped too when it holds nothing else (no document, no
// other index); otherwise it stays and the detail says why.
func (rs restorer) restoreIndex(ctx context.Context, c store.Change) (detail string, err error) {
	var info restoreInfo
	json.Unmarshal([]byte(c.Restore), &info)
	var ic record.IndexChange
	if err := json.Unmarshal([]byte(c.Change), &ic); err != nil || ic.Name == "" {
		return "", fmt.Errorf("the record does not say which index: %q", c.Change)
	}
	db, coll, err := workload.SplitNS(c.Target)
	if err != nil {
		return "", err
	}
	client, done, err := rs.clientFor(ctx, c.Server, info)
	if err != nil {
		return "", err
	}
	defer done()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = client.Database(db).RunCommand(cctx, bson.D{{Key: "dropIndexes", Value: coll}, {Key: "index", Value: ic.Name}}).Err()
	var ce mongo.CommandError
	switch {
	case errors.As(err, &ce) && (ce.Code == codeIndexNotFound || ce.Code == codeNamespaceNotFound):
		detail = fmt.Sprintf("index %s on %s was not there any more", ic.Name, c.Target)
		rs.logf("info", c.Server, "index %s on %s: not there any more, nothing to drop", ic.Name, c.Target)
	case err != nil:
		return "", err
	default:
		rs.logf("info", c.Server, "dropped index %s on %s, which the run created", ic.Name, c.Target)
	}
	if ic.CollectionCreated {
		if why := dropIfEmpty(cctx, client.Database(db).Collection(coll)); why != "" {
			detail = joinDetail(detail, fmt.Sprintf("the collection %s, which creating the index created, stays: %s", c.Target, why))
			rs.logf("warn", c.Server, "the collection %s, which creating index %s created, stays: %s", c.Target, ic.Name, why)
		} else {
			rs.logf("info", c.Server, "dropped the collection %s, which creating index %s created (it held nothing)", c.Target, ic.Name)
		}
	}
	return detail, nil
}

// dropIfEmpty drops coll if it has no document and no index but _id's;
// else it returns why it did not.
func dropIfEmpty(ctx context.Context, coll *mongo.Collection) string {
	raw, err := coll.Database().RunCommand(ctx, bson.D{{Key: "count", Value: coll.Name()}}).Raw()
	if err != nil {
		return "count its documents: " + err.Error()
	}
	n := lookupInt(raw, "n")
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		return "list its indexes: " + err.Error()
	}
	switch {
	case n > 0:
		return fmt.Sprintf("it holds %d documents", n)
	case len(specs) > 1:
		return fmt.Sprintf("it has %d indexes besides _id", len(specs)-1)
	}
	if err := coll.Drop(ctx); err != nil {
		return "drop it: " + err.Error()
	}
	return ""
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

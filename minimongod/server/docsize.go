package server

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
)

// checkInsertSize refuses a document to insert over the 16 MiB BSON limit,
// with mongod's code and message.
func checkInsertSize(doc []byte) error {
	if len(doc) > mongoerr.MaxBSONObjectSize {
		return mongoerr.New(mongoerr.CodeBSONObjectTooLarge, "object to insert too large. size in bytes: %d, max size: %d", len(doc), mongoerr.MaxBSONObjectSize)
	}
	return nil
}

// applyUpdate applies upd to old and refuses a result over the 16 MiB BSON
// limit, as mongod's update stage does.
func applyUpdate(upd *query.Update, old bson.Raw) (bson.Raw, bool, error) {
	out, ch, err := upd.Apply(old)
	if err != nil {
		return nil, false, err
	}
	if len(out) > mongoerr.MaxBSONObjectSize {
		return nil, false, mongoerr.New(mongoerr.CodeUpdateTooLarge, "Resulting document after update is larger than %d", mongoerr.MaxBSONObjectSize)
	}
	return out, ch, nil
}

package server

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/rawbson"
)

// checkInsertSize refuses a document to insert over the 16 MiB BSON limit,
// with mongod's code and message.
func checkInsertSize(doc []byte) error {
	if len(doc) > mongoerr.MaxBSONObjectSize {
		return mongoerr.New(mongoerr.CodeBSONObjectTooLarge, "object to insert too large. size in bytes: %d, max size: %d", len(doc), mongoerr.MaxBSONObjectSize)
	}
	return nil
}

// checkInsertDepth refuses a document to insert that spans more levels of
// documents and arrays than a stored document may, with mongod's code and
// message (fixDocumentForInsert).
func checkInsertDepth(doc []byte) error {
	if rawbson.Levels(doc, mongoerr.MaxStorageDepth) > mongoerr.MaxStorageDepth {
		return mongoerr.New(mongoerr.CodeOverflow, "cannot insert document because it exceeds %d levels of nesting", mongoerr.MaxStorageDepth)
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

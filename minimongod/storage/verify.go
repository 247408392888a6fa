package storage

import (
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Validation is what Validate found in a collection.
type Validation struct {
	Records      int64
	InvalidDocs  int64
	KeysPerIndex map[string]int64
	Errors       []string
	IndexErrors  map[string]string
}

// Validate verifies the collection's table and its index tables with
// WiredTiger's verify and counts the records, invalid documents and keys
// per index. It holds the catalog lock, so no operation runs meanwhile.
func (e *Engine) Validate(c *Collection) (*Validation, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	v := &Validation{KeysPerIndex: map[string]int64{}, IndexErrors: map[string]string{}}
	if err := e.verifyTable(c.URI()); err != nil {
		v.Errors = append(v.Errors, err.Error())
	}
	for _, ix := range c.indexes {
		if err := e.verifyTable(ix.URI()); err != nil {
			v.IndexErrors[ix.Name] = err.Error()
			v.Errors = append(v.Errors, err.Error())
		}
	}
	n, err := e.countRows(c.URI(), func(doc []byte) {
		if bsoncore.Document(doc).Validate() != nil {
			v.InvalidDocs++
		}
	})
	if err != nil {
		return nil, err
	}
	v.Records = n
	v.KeysPerIndex["_id_"] = n
	for _, ix := range c.indexes {
		if v.KeysPerIndex[ix.Name], err = e.countRows(ix.URI(), nil); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// verifyTable runs WiredTiger's verify on uri.
func (e *Engine) verifyTable(uri string) error {
	return e.whenIdle(uri, func() error { return e.meta.Verify(uri) })
}

// countRows counts the rows of uri, handing each value to each when set.
func (e *Engine) countRows(uri string, each func(v []byte)) (int64, error) {
	cur, err := e.meta.OpenCursor(uri, "")
	if err != nil {
		return 0, err
	}
	defer cur.Close()
	var n int64
	for cur.Next() == nil {
		if each != nil {
			_, v, err := cur.KeyValue()
			if err != nil {
				return n, err
			}
			each(v)
		}
		n++
	}
	return n, nil
}

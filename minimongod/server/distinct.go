package server

import (
	"bytes"
	"sort"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
)

// cmdDistinct is {distinct: coll, key, query}: the distinct values of key
// among the matching documents, an array's elements counted one by one,
// in BSON order.
func cmdDistinct(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, _, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	kv, err := req.lookupErr("key")
	if err != nil {
		return nil, mongoerr.New(mongoerr.CodeMissingField, "BSON field 'distinct.key' is missing but a required field")
	}
	if kv.Type != bsoncore.TypeString {
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field 'distinct.key' is the wrong type '%s', expected type 'string'", typeName(kv.Type))
	}
	filter, err := docArg(req, "query")
	if err != nil {
		return nil, err
	}
	m, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	seen := map[string]bsoncore.Value{}
	add := func(v bsoncore.Value) {
		k := string(keyenc.Append(nil, v))
		if _, ok := seen[k]; !ok {
			seen[k] = bsoncore.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)}
		}
	}
	if coll != nil {
		err = c.storage(readTicket, func() error {
			ex := c.newExecutor(coll, m, nil, 0, 0, nil)
			defer ex.detach()
			return ex.each(c.sess, func(_, doc []byte) error {
				v, ok := query.Lookup(doc, kv.StringValue())
				switch {
				case !ok:
				case v.Type == bsoncore.TypeArray:
					vals, _ := v.Array().Values()
					for _, e := range vals {
						add(e)
					}
				default:
					add(v)
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare([]byte(keys[i]), []byte(keys[j])) < 0 })
	a, d := bsoncore.AppendArrayElementStart(dst, "values")
	for i, k := range keys {
		d = bsoncore.AppendValueElement(d, itoa(i), seen[k])
	}
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return d, nil
}

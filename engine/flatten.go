package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// FlattenNumbers returns every numeric field of doc (numbers, booleans as
// 0/1, dates as Unix milliseconds), nested documents joined with dots:
// {"wiredTiger": {"cache": {"bytes currently in the cache": 5}}} gives
// "wiredTiger.cache.bytes currently in the cache" = 5. Arrays are skipped.
func FlattenNumbers(doc bson.Raw) map[string]float64 {
	out := make(map[string]float64, 1024)
	flattenInto(out, "", bsoncore.Document(doc))
	return out
}

func flattenInto(out map[string]float64, prefix string, doc bsoncore.Document) {
	elems, err := doc.Elements()
	if err != nil {
		return
	}
	for _, el := range elems {
		key := el.Key()
		if prefix != "" {
			key = prefix + "." + key
		}
		v := el.Value()
		switch v.Type {
		case bsoncore.TypeDouble:
			out[key] = v.Double()
		case bsoncore.TypeInt32:
			out[key] = float64(v.Int32())
		case bsoncore.TypeInt64:
			out[key] = float64(v.Int64())
		case bsoncore.TypeBoolean:
			if v.Boolean() {
				out[key] = 1
			} else {
				out[key] = 0
			}
		case bsoncore.TypeDateTime:
			out[key] = float64(v.DateTime())
		case bsoncore.TypeTimestamp:
			t, _ := v.Timestamp()
			out[key] = float64(t)
		case bsoncore.TypeEmbeddedDocument:
			flattenInto(out, key, v.Document())
		}
	}
}

// CacheMetric names a serverStatus field by its path under wiredTiger.cache.
func CacheMetric(desc string) string { return "wiredTiger.cache." + desc }

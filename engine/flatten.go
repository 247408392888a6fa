package engine

import (
	"encoding/binary"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// FlattenNumbers returns every numeric field of doc (numbers, booleans as
// 0/1, dates as Unix milliseconds), nested documents joined with dots:
// {"wiredTiger": {"cache": {"bytes currently in the cache": 5}}} gives
// "wiredTiger.cache.bytes currently in the cache" = 5. Arrays are skipped,
// and so is a document with an element that cannot be read.
//
// The names are interned: serverStatus has the same few thousand fields
// every second, so a sample allocates its map and no strings.
func FlattenNumbers(doc bson.Raw) map[string]float64 {
	flatNames.Lock()
	defer flatNames.Unlock()
	out := make(map[string]float64, max(flatNames.size, 64))
	flatNames.pos, flatNames.next = 0, flatNames.next[:0]
	flatNames.path = flattenInto(out, flatNames.path[:0], bsoncore.Document(doc))
	flatNames.size = len(out)
	flatNames.last, flatNames.next = flatNames.next, flatNames.last
	if len(flatNames.m) > maxInterned {
		flatNames.m = make(map[string]string, len(out))
	}
	return out
}

// maxInterned bounds the interned names: beyond it they start afresh.
const maxInterned = 1 << 17

// flatNames are the names FlattenNumbers gave out, by themselves, and in
// the order of the last document: the next one most likely has the same
// fields in the same order, and then a comparison finds each name.
var flatNames = struct {
	sync.Mutex
	m          map[string]string
	last, next []string // the names of the last document, of this one
	pos        int      // in last
	path       []byte
	size       int // of the last map
}{m: map[string]string{}}

func intern(path []byte) string {
	f := &flatNames
	var s string
	if f.pos < len(f.last) && f.last[f.pos] == string(path) {
		s = f.last[f.pos]
		f.pos++
	} else if m, ok := f.m[string(path)]; ok {
		s = m
	} else {
		s = string(path)
		f.m[s] = s
	}
	f.next = append(f.next, s)
	return s
}

// flattenInto adds the fields of doc under the prefix path (with its dot)
// and returns path's buffer for reuse.
func flattenInto(out map[string]float64, path []byte, doc bsoncore.Document) []byte {
	if len(doc) < 5 || int(int32(binary.LittleEndian.Uint32(doc))) != len(doc) || doc[len(doc)-1] != 0 {
		return path
	}
	base := len(path)
	for rest := doc[4 : len(doc)-1]; len(rest) > 0; {
		el, r, ok := bsoncore.ReadElement(rest)
		if !ok || el.Validate() != nil {
			// As Elements would have refused the whole document: take
			// back what it gave.
			for k := range out {
				if strings.HasPrefix(k, string(path[:base])) {
					delete(out, k)
				}
			}
			return path[:base]
		}
		rest = r
		path = append(path[:base], el.KeyBytes()...)
		v := el.Value()
		switch v.Type {
		case bsoncore.TypeDouble:
			out[intern(path)] = v.Double()
		case bsoncore.TypeInt32:
			out[intern(path)] = float64(v.Int32())
		case bsoncore.TypeInt64:
			out[intern(path)] = float64(v.Int64())
		case bsoncore.TypeBoolean:
			if v.Boolean() {
				out[intern(path)] = 1
			} else {
				out[intern(path)] = 0
			}
		case bsoncore.TypeDateTime:
			out[intern(path)] = float64(v.DateTime())
		case bsoncore.TypeTimestamp:
			t, _ := v.Timestamp()
			out[intern(path)] = float64(t)
		case bsoncore.TypeEmbeddedDocument:
			path = flattenInto(out, append(path, '.'), v.Document())
		}
	}
	return path[:base]
}

// CacheMetric names a serverStatus field by its path under wiredTiger.cache.
func CacheMetric(desc string) string { return "wiredTiger.cache." + desc }

package mlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Unlike encoding/json it leaves
// <, > and & alone, as mongod does; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = appendEscape(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendEscape escapes one ASCII quote, backslash or control character.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendValue appends an attribute value as JSON. Common types are encoded
// directly; bson.D keeps its order; other values go through encoding/json.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float64:
		return appendDouble(b, x)
	case float32:
		return appendDouble(b, float64(x))
	case error:
		return appendString(b, x.Error())
	}
	return appendComposite(b, v)
}

// appendComposite handles documents, arrays and BSON scalar types.
func appendComposite(b []byte, v any) []byte {
	switch x := v.(type) {
	case bson.D:
		return appendDoc(b, x)
	case bson.E:
		return appendDoc(b, bson.D{x})
	case []Attr:
		return appendAttrs(b, x)
	case map[string]any:
		return appendMap(b, x)
	case bson.M:
		return appendMap(b, x)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = v
		}
		return appendMap(b, m)
	case []any:
		return appendArray(b, len(x), func(i int) any { return x[i] })
	case bson.A:
		return appendArray(b, len(x), func(i int) any { return x[i] })
	case []string:
		return appendArray(b, len(x), func(i int) any { return x[i] })
	case time.Time:
		return appendDate(b, x)
	case bson.DateTime:
		return appendDate(b, x.Time())
	case time.Duration:
		return appendString(b, x.String())
	case bson.ObjectID:
		return append(appendString(append(b, `{"$oid":`...), x.Hex()), '}')
	case bson.Timestamp:
		return fmt.Appendf(b, `{"$timestamp":{"t":%d,"i":%d}}`, x.T, x.I)
	case fmt.Stringer:
		return appendString(b, x.String())
	}
	return appendJSON(b, v)
}

// appendDoc appends an ordered document as a JSON object.
func appendDoc(b []byte, d bson.D) []byte {
	b = append(b, '{')
	for i, e := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.Key)
		b = append(b, ':')
		b = appendValue(b, e.Value)
	}
	return append(b, '}')
}

// appendMap appends a map as a JSON object with keys sorted.
func appendMap(b []byte, m map[string]any) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := make(bson.D, 0, len(keys))
	for _, k := range keys {
		d = append(d, bson.E{Key: k, Value: m[k]})
	}
	return appendDoc(b, d)
}

// appendAttrs appends nested attributes as a JSON object.
func appendAttrs(b []byte, attrs []Attr) []byte {
	b = append(b, '{')
	for i, a := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, a.Key)
		b = append(b, ':')
		b = appendValue(b, a.Value)
	}
	return append(b, '}')
}

// appendArray appends n elements given by at as a JSON array.
func appendArray(b []byte, n int, at func(int) any) []byte {
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, at(i))
	}
	return append(b, ']')
}

// appendDouble writes a double as mongod's relaxed extended JSON does:
// integral values keep a ".0", non-finite values use $numberDouble.
func appendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `{"$numberDouble":"NaN"}`...)
	case math.IsInf(f, 1):
		return append(b, `{"$numberDouble":"Infinity"}`...)
	case math.IsInf(f, -1):
		return append(b, `{"$numberDouble":"-Infinity"}`...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	if !bytes.ContainsAny(b[start:], ".e") {
		b = append(b, ".0"...)
	}
	return b
}

// appendDate writes {"$date":"..."} in the log's timestamp format.
func appendDate(b []byte, t time.Time) []byte {
	b = append(b, `{"$date":"`...)
	b = t.AppendFormat(b, timeLayout)
	return append(b, `"}`...)
}

// appendJSON falls back to encoding/json (maps are sorted by key) without
// HTML escaping; unencodable values are logged as their %v text.
func appendJSON(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return appendString(b, fmt.Sprintf("%v", v))
	}
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

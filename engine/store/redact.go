package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// passwordMask replaces the password of a MongoDB connection string.
const passwordMask = "xxxxx"

// RedactURI returns s with the password of every MongoDB connection string
// in it ("mongodb://" or "mongodb+srv://", any case) replaced by "xxxxx":
// mongodb://user:secret@host/db becomes mongodb://user:xxxxx@host/db. The
// user info ends at the last '@' before the query ('?'), a space or a quote,
// so passwords that break the rules and contain '/' are masked as well.
func RedactURI(s string) string {
	if !containsFold(s, "mongodb") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := indexScheme(rest)
		if i < 0 {
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		n := schemeLen(rest)
		b.WriteString(rest[:n])
		rest = rest[n:]
		end := strings.IndexAny(rest, "? \t\r\n\"'`<>")
		if end < 0 {
			end = len(rest)
		}
		at := strings.LastIndexByte(rest[:end], '@')
		colon := strings.IndexByte(rest[:max(at, 0)], ':')
		if at < 0 || colon < 0 || colon == at-1 {
			continue
		}
		b.WriteString(rest[:colon+1])
		b.WriteString(passwordMask)
		rest = rest[at:]
	}
	b.WriteString(rest)
	return b.String()
}

// indexScheme returns where the first MongoDB scheme in s starts, or -1.
func indexScheme(s string) int {
	for i := 0; i+len("mongodb://") <= len(s); i++ {
		if (s[i] == 'm' || s[i] == 'M') && schemeLen(s[i:]) > 0 {
			return i
		}
	}
	return -1
}

// schemeLen returns the length of the MongoDB scheme s starts with, or 0.
func schemeLen(s string) int {
	for _, p := range []string{"mongodb://", "mongodb+srv://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return len(p)
		}
	}
	return 0
}

// containsFold reports whether s contains the lower-case ASCII word in any case.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// marshalRedacted returns v as JSON text with every string in it (keys
// included) passed through RedactURI; a nil map or slice gives a NULL.
func marshalRedacted(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return redactJSON(b)
}

// redactJSON checks raw JSON text and masks URI passwords in its strings;
// empty text and null give a NULL.
func redactJSON(b []byte) (any, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("invalid JSON %.40q", b)
	}
	if !containsFold(string(b), "mongodb") {
		return string(b), nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	e := json.NewEncoder(&out)
	e.SetEscapeHTML(false)
	if err := e.Encode(RedactValue(v)); err != nil {
		return nil, err
	}
	return strings.TrimSuffix(out.String(), "\n"), nil
}

// RedactValue returns a copy of v, a value as JSON or YAML decode it
// (maps, slices, strings, numbers, booleans), with URI passwords masked in
// every string, map keys included; v itself is left as it is.
func RedactValue(v any) any {
	switch v := v.(type) {
	case string:
		return RedactURI(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = RedactValue(x)
		}
		return out
	case map[string]any:
		return RedactMap(v)
	}
	return v
}

// RedactMap is RedactValue for a map (nil stays nil).
func RedactMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[RedactURI(k)] = RedactValue(x)
	}
	return out
}

// decodeJSON decodes a nullable JSON column into dst; NULL leaves dst alone.
func decodeJSON(col []byte, dst any) error {
	if col == nil {
		return nil
	}
	return json.Unmarshal(col, dst)
}

// rawJSON returns a nullable JSON column as raw JSON (nil for NULL).
func rawJSON(col []byte) json.RawMessage {
	if col == nil {
		return nil
	}
	return json.RawMessage(bytes.Clone(col))
}

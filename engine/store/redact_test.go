package store

import (
	"fmt"
	"testing"
)

func TestRedactURI(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"no uri here", "no uri here"},
		{"mongodb://user:pass@host", "mongodb://user:xxxxx@host"},
		{"mongodb://user:pass@host:27017/db?authSource=admin", "mongodb://user:xxxxx@host:27017/db?authSource=admin"},
		{"mongodb+srv://u:p%40ss@cluster0.example.net/", "mongodb+srv://u:xxxxx@cluster0.example.net/"},
		{"MONGODB://U:Secret@H", "MONGODB://U:xxxxx@H"},
		{"mongodb://u:p@h1:1,h2:2,h3:3/?replicaSet=rs0", "mongodb://u:xxxxx@h1:1,h2:2,h3:3/?replicaSet=rs0"},
		{"connect mongodb://a:b@h failed; retry mongodb://c:d@k", "connect mongodb://a:xxxxx@h failed; retry mongodb://c:xxxxx@k"},
		{`{"uri":"mongodb://a:b@h/x"}`, `{"uri":"mongodb://a:xxxxx@h/x"}`},
		{"mongodb://user@host", "mongodb://user@host"},
		{"mongodb://user:@host", "mongodb://user:@host"},
		{"mongodb://host:27017/db", "mongodb://host:27017/db"},
		{"mongodb://host:27017/?appName=a@b", "mongodb://host:27017/?appName=a@b"},
		{"mongodb://u:pa/ss@host/db", "mongodb://u:xxxxx@host/db"},
		{"mongodb://u:p@ss@host", "mongodb://u:xxxxx@host"},
		{"mongodb://", "mongodb://"},
		{"mongodb:/u:p@h", "mongodb:/u:p@h"},
		{"mongodb", "mongodb"},
		{"x mongodb://u:p@h y", "x mongodb://u:xxxxx@h y"},
	}
	for _, tt := range tests {
		if got := RedactURI(tt.in); got != tt.want {
			t.Errorf("RedactURI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactValueCopies: RedactValue masks every string of a decoded
// value, map keys and nested lists included, and leaves the value it was
// given as it was (a config's parameters stay usable).
func TestRedactValueCopies(t *testing.T) {
	const uri, masked = "mongodb://u:secret@127.0.0.1:1/", "mongodb://u:xxxxx@127.0.0.1:1/"
	in := map[string]any{"uri": uri, "n": 3, "list": []any{uri, true}, uri: map[string]any{"k": uri}}
	got := RedactMap(in)
	want := map[string]any{"uri": masked, "n": 3, "list": []any{masked, true}, masked: map[string]any{"k": masked}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("RedactMap = %v, want %v", got, want)
	}
	if in["uri"] != uri || in["list"].([]any)[0] != uri || in[uri].(map[string]any)["k"] != uri {
		t.Errorf("RedactMap changed its argument: %v", in)
	}
	if RedactMap(nil) != nil {
		t.Errorf("RedactMap(nil) is not nil")
	}
}

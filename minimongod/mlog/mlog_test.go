package mlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

var fixed = time.Date(2026, 12, 1, 7, 40, 0, 123456789, time.UTC)

// newTest returns a Logger writing to a buffer with a fixed clock.
func newTest() (*Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	l := New(&buf)
	l.SetClock(func() time.Time { return fixed })
	return l, &buf
}

func TestGoldenLine(t *testing.T) {
	l, buf := newTest()
	l.Info("NETWORK", 23016, "listener", "Waiting for connections", A("port", 27017), A("ssl", "off"))
	want := `{"t":{"$date":"2026-12-01T07:40:00.123+00:00"},"s":"I",  "c":"NETWORK",  "id":23016,   ` +
		`"ctx":"listener","msg":"Waiting for connections","attr":{"port":27017,"ssl":"off"}}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPadding(t *testing.T) {
	tests := []struct {
		sev       Severity
		component string
		id        int
		want      string
	}{
		{Fatal, "CONTROL", 20574, `"s":"F",  "c":"CONTROL",  "id":20574,   "ctx"`},
		{Debug1, "COMMAND", 21965, `"s":"D1", "c":"COMMAND",  "id":21965,   "ctx"`},
		{Info, "-", 4615611, `"s":"I",  "c":"-",        "id":4615611, "ctx"`},
		{Warning, "SHARDING", 22120, `"s":"W",  "c":"SHARDING", "id":22120,   "ctx"`},
		{Error, "REPLICATION", 123456789, `"s":"E",  "c":"REPLICATION","id":123456789,"ctx"`},
	}
	for _, tt := range tests {
		l, buf := newTest()
		l.SetVerbosity(5)
		l.Log(tt.sev, tt.component, tt.id, "main", "m")
		if !strings.Contains(buf.String(), tt.want) {
			t.Errorf("line %s lacks %s", buf.String(), tt.want)
		}
	}
}

// entry is a decoded log line.
type entry struct {
	T    map[string]string `json:"t"`
	S    string            `json:"s"`
	C    string            `json:"c"`
	ID   int               `json:"id"`
	Ctx  string            `json:"ctx"`
	Msg  string            `json:"msg"`
	Attr map[string]any    `json:"attr"`
}

// decode parses every line of out.
func decode(t *testing.T, out string) []entry {
	t.Helper()
	var entries []entry
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	return entries
}

func TestFieldsDecode(t *testing.T) {
	l, buf := newTest()
	l.Warning("STORAGE", 22120, "initandlisten", "Access control is not enabled",
		A("tags", []string{"startupWarnings"}))
	l.Error("CONTROL", 20557, "initandlisten", "DBException in initAndListen, terminating",
		A("error", errors.New("NonExistentPath: Data directory /x not found.")))
	l.Fatal("CONTROL", 20574, "main", "Error during global initialization",
		A("error", bson.D{{Key: "code", Value: int32(2)}, {Key: "codeName", Value: "BadValue"},
			{Key: "errmsg", Value: "bad"}}))
	got := decode(t, buf.String())
	date := map[string]string{"$date": "2026-12-01T07:40:00.123+00:00"}
	want := []entry{
		{date, "W", "STORAGE", 22120, "initandlisten", "Access control is not enabled",
			map[string]any{"tags": []any{"startupWarnings"}}},
		{date, "E", "CONTROL", 20557, "initandlisten", "DBException in initAndListen, terminating",
			map[string]any{"error": "NonExistentPath: Data directory /x not found."}},
		{date, "F", "CONTROL", 20574, "main", "Error during global initialization",
			map[string]any{"error": map[string]any{"code": 2.0, "codeName": "BadValue", "errmsg": "bad"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNoAttr(t *testing.T) {
	l, buf := newTest()
	l.Info("-", 1, "main", "hi")
	if strings.Contains(buf.String(), "attr") {
		t.Errorf("unexpected attr in %s", buf)
	}
}

func TestValueEncoding(t *testing.T) {
	oid, _ := bson.ObjectIDFromHex("5f1a2b3c4d5e6f7081920a1b")
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"string", "a\"b\\c\n\t<&>é\x01", `"a\"b\\c\n\t<&>é\u0001"`},
		{"bad utf8", "a\xffb", `"a\ufffdb"`},
		{"int", 42, `42`},
		{"int64", int64(-9007199254740993), `-9007199254740993`},
		{"uint64", uint64(18446744073709551615), `18446744073709551615`},
		{"int32", int32(7), `7`},
		{"double", 0.25, `0.25`},
		{"integral double", 60.0, `60.0`},
		{"big double", 1e21, `1e+21`},
		{"nan", math.NaN(), `{"$numberDouble":"NaN"}`},
		{"inf", math.Inf(-1), `{"$numberDouble":"-Infinity"}`},
		{"bool", true, `true`},
		{"nil", nil, `null`},
		{"error", errors.New("boom"), `"boom"`},
		{"bson.D order", bson.D{{Key: "z", Value: 1}, {Key: "a", Value: bson.D{{Key: "y", Value: "x"}}}},
			`{"z":1,"a":{"y":"x"}}`},
		{"bson.A", bson.A{1, "two", 3.5}, `[1,"two",3.5]`},
		{"slice", []any{int32(1), bson.D{{Key: "k", Value: false}}}, `[1,{"k":false}]`},
		{"strings", []string{"a", "b"}, `["a","b"]`},
		{"map sorted", map[string]any{"b": 1, "a": bson.D{{Key: "x", Value: 2}}}, `{"a":{"x":2},"b":1}`},
		{"bson.M", bson.M{"k": "v"}, `{"k":"v"}`},
		{"map[string]string", map[string]string{"y": "1", "x": "2"}, `{"x":"2","y":"1"}`},
		{"attrs", []Attr{A("b", 1), A("a", 2)}, `{"b":1,"a":2}`},
		{"time", fixed, `{"$date":"2026-12-01T07:40:00.123+00:00"}`},
		{"oid", oid, `{"$oid":"5f1a2b3c4d5e6f7081920a1b"}`},
		{"timestamp", bson.Timestamp{T: 5, I: 1}, `{"$timestamp":{"t":5,"i":1}}`},
		{"duration", 1500 * time.Millisecond, `"1.5s"`},
		{"struct", struct {
			A int    `json:"a"`
			B string `json:"b"`
		}{1, "<x>"}, `{"a":1,"b":"<x>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendValue(nil, tt.v))
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("%s is not valid JSON", got)
			}
		})
	}
}

func TestSeverity(t *testing.T) {
	want := map[Severity]string{Fatal: "F", Error: "E", Warning: "W", Info: "I",
		Debug1: "D1", Debug2: "D2", Debug3: "D3", Debug4: "D4", Debug5: "D5"}
	for sev, s := range want {
		if sev.String() != s {
			t.Errorf("%d.String() = %q, want %q", sev, sev.String(), s)
		}
	}
	if Debug(0) != Debug1 || Debug(3) != Debug3 || Debug(9) != Debug5 {
		t.Error("Debug clamping")
	}
}

func TestVerbosityFilter(t *testing.T) {
	l, buf := newTest()
	l.Log(Debug1, "COMMAND", 1, "conn1", "dropped")
	if buf.Len() != 0 || l.Enabled(Debug1) || !l.Enabled(Info) {
		t.Fatalf("debug written at verbosity 0: %s", buf)
	}
	l.SetVerbosity(2)
	l.Log(Debug2, "COMMAND", 2, "conn1", "kept")
	l.Log(Debug3, "COMMAND", 3, "conn1", "dropped")
	got := decode(t, buf.String())
	if len(got) != 1 || got[0].S != "D2" || got[0].ID != 2 {
		t.Errorf("got %+v", got)
	}
}

// countingWriter records each Write call.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestConcurrentOneWritePerLine(t *testing.T) {
	w := &countingWriter{}
	l := New(w)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				l.Info("NETWORK", 22943, "listener", "Connection accepted",
					A("goroutine", g), A("i", i), A("doc", bson.D{{Key: "k", Value: strings.Repeat("x", i)}}))
			}
		}(g)
	}
	wg.Wait()
	if len(w.writes) != 1600 {
		t.Fatalf("%d writes, want 1600", len(w.writes))
	}
	for _, line := range w.writes {
		if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "}\n") || !json.Valid([]byte(line)) {
			t.Fatalf("bad line %q", line)
		}
	}
}

func TestOpenAppendAndRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mongod.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("-", 1, "main", "appended")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "old\n{") {
		t.Errorf("append mode lost old content: %q", data)
	}

	l, err = openAt(path, false, fixed)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("-", 2, "main", "fresh")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	renamed, err := os.ReadFile(path + ".2026-12-01T07-40-00")
	if err != nil || string(renamed) != string(data) {
		t.Errorf("old log not renamed: %q, %v", renamed, err)
	}
	fresh, _ := os.ReadFile(path)
	if got := decode(t, string(fresh)); len(got) != 1 || got[0].Msg != "fresh" {
		t.Errorf("new log = %q", fresh)
	}

	if _, err := openAt(path, false, fixed); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".2026-12-01T07-40-00.1"); err != nil {
		t.Errorf("second rename in the same second: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir, true)
	var oe *OpenError
	if !errors.As(err, &oe) || oe.Msg != `logpath "`+dir+`" should name a file, not a directory.` {
		t.Errorf("directory: %v", err)
	}
	missing := filepath.Join(dir, "no", "such", "mongod.log")
	_, err = Open(missing, true)
	if !errors.As(err, &oe) ||
		oe.Msg != "Can't initialize rotatable log file :: caused by :: Failed to open "+missing {
		t.Errorf("missing dir: %v", err)
	}
}

func TestCloseNewDoesNotCloseWriter(t *testing.T) {
	l, buf := newTest()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Info("-", 1, "main", "still works")
	if buf.Len() == 0 {
		t.Error("logger made by New stopped after Close")
	}
}

func BenchmarkInfo(b *testing.B) {
	l := New(discardWriter{})
	doc := bson.D{{Key: "remote", Value: "127.0.0.1:5000"}, {Key: "connectionCount", Value: 3}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.Info("NETWORK", 22943, "listener", "Connection accepted", A("remote", "127.0.0.1:5000"),
			A("connectionId", i), A("doc", doc))
	}
}

// discardWriter is a Writer that drops everything.
type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

package hostctl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// failedStart is the output of a server that could not open WiredTiger,
// as minimongod (and mongod 4.4) write it.
var failedStart = []string{
	`{"t":{"$date":"2026-12-01T15:06:06.753+00:00"},"s":"I",  "c":"CONTROL",  "id":4615611, "ctx":"initandlisten","msg":"MongoDB starting","attr":{"pid":17627,"port":45671,"dbPath":"/tmp/x","architecture":"64-bit"}}`,
	`{"t":{"$date":"2026-12-01T15:06:06.757+00:00"},"s":"I",  "c":"STORAGE",  "id":22315,   "ctx":"initandlisten","msg":"Opening WiredTiger","attr":{"config":"create,cache_size=11540M,session_max=33000,bogus_key=1"}}`,
	`{"t":{"$date":"2026-12-01T15:06:06.879+00:00"},"s":"E",  "c":"STORAGE",  "id":22435,   "ctx":"WTError","msg":"WiredTiger error","attr":{"error":22,"message":"wiredtiger_open: unknown configuration key: 'bogus_key': Invalid argument"}}`,
	`{"t":{"$date":"2026-12-01T15:06:06.879+00:00"},"s":"E",  "c":"CONTROL",  "id":20557,   "ctx":"initandlisten","msg":"DBException in initAndListen, terminating","attr":{"error":"open WiredTiger: unknown configuration key: 'bogus_key': Invalid argument"}}`,
	`{"t":{"$date":"2026-12-01T15:06:06.880+00:00"},"s":"I",  "c":"CONTROL",  "id":20565,   "ctx":"initandlisten","msg":"Now exiting"}`,
	`open WiredTiger: unknown configuration key: 'bogus_key': Invalid argument`,
}

func TestSummarizeLog(t *testing.T) {
	long := `{"s":"I","msg":"Options","attr":{"x":"` + strings.Repeat("a", 2000) + `"}}`
	for _, tt := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"last error line", failedStart,
			`last error in its log: DBException in initAndListen, terminating {"error":"open WiredTiger: unknown configuration key: 'bogus_key': Invalid argument"}`},
		{"a fatal line with attributes beats a bare one", []string{
			`{"s":"F","c":"-","msg":"Fatal assertion","attr":{"msgid":28595,"file":"src/mongo/db/storage/wiredtiger/wiredtiger_kv_engine.cpp","line":671}}`,
			`{"s":"F","c":"-","msg":"\n\n***aborting after fassert() failure\n\n"}`,
		}, `last error in its log: Fatal assertion {"msgid":28595,"file":"src/mongo/db/storage/wiredtiger/wiredtiger_kv_engine.cpp","line":671}`},
		{"only a bare fatal line", []string{`{"s":"I","msg":"a"}`, `{"s":"F","msg":"\n\n***aborting after fassert() failure\n\n"}`},
			"last error in its log: ***aborting after fassert() failure"},
		{"plain lines", []string{"one", "two", "Error parsing command line: unrecognised option '--bogus'", "try 'mongod --help'"},
			"last log lines: two | Error parsing command line: unrecognised option '--bogus' | try 'mongod --help'"},
		{"JSON without errors", []string{`{"s":"I","msg":"Waiting for connections","attr":{"port":1}}`},
			`last log lines: Waiting for connections {"port":1}`},
		{"empty", nil, "its log is empty"},
	} {
		if got := summarizeLog(tt.lines); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	if got := summarizeLog([]string{long}); len(got) > 2*quoteChars || !strings.HasSuffix(got, "...") {
		t.Errorf("a long line is quoted whole: %d bytes", len(got))
	}
}

func TestStartFailureQuotesTheLastErrorLine(t *testing.T) {
	bin := minimongodBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, err := Start(ctx, ServerSpec{Binary: bin, DBPath: filepath.Join(t.TempDir(), "db"),
		Settings: Settings{CacheSizeGB: 0.25, EngineConfig: "bogus_key=1"}}, StartOptions{})
	if err == nil {
		t.Fatal("a server with a bad WiredTiger setting started")
	}
	msg := err.Error()
	for _, want := range []string{
		"start mongod: exited with status 100 before answering hello; ",
		`last error in its log: DBException in initAndListen, terminating {"error":"`,
		"bogus_key",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, `"$date"`) || strings.Contains(msg, "\n") || len(msg) > 700 {
		t.Errorf("the error quotes raw log lines (%d bytes):\n%s", len(msg), msg)
	}
}

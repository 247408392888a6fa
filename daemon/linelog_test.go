package daemon

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// A child's output is logged a line an entry, but a table the playbook
// printed (report.table) is one entry holding all its lines, also when
// it arrives in pieces; URI passwords are masked in both.
func TestPlaybookOutputLogsATableAsOneEntry(t *testing.T) {
	var buf bytes.Buffer
	l := &lineLog{log: slog.New(slog.NewJSONHandler(&buf, nil)), level: slog.LevelInfo, msg: "playbook output"}
	l.setRun(7)
	table := "┌────┬────┐\n│ A  │ B  │\n├────┼────┤\n│ 1  │ 2  │\n└────┴────┘\n"
	out := "loaded mongodb://u:secret@127.0.0.1:1\n" + table + "done\n" + "┌──┐\n│ unfinished"
	for i := 0; i < len(out); i += 7 {
		l.Write([]byte(out[i:min(i+7, len(out))]))
	}
	l.flush()
	var lines []string
	for _, raw := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e struct {
			Msg  string `json:"msg"`
			Run  int64  `json:"run"`
			Line string `json:"line"`
		}
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if e.Msg != "playbook output" || e.Run != 7 {
			t.Errorf("entry %+v", e)
		}
		lines = append(lines, e.Line)
	}
	want := []string{"loaded mongodb://u:xxxxx@127.0.0.1:1", strings.TrimSuffix(table, "\n"), "done", "┌──┐\n│ unfinished"}
	if len(lines) != len(want) {
		t.Fatalf("%d entries %q, want %d %q", len(lines), lines, len(want), want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("entry %d: %q, want %q", i, lines[i], want[i])
		}
	}
}

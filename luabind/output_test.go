package luabind

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testhost"
)

// TestOutputIsRecorded: print and io.write lines reach the run's output and
// its record, one event per line, in order with log() lines; report.table
// is recorded as the table it drew.
func TestOutputIsRecorded(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	run, err := engine.StartRun(ctx, engine.Config{Store: st, Host: testhost.New(t), Dir: t.TempDir()},
		engine.RunInfo{PlaybookPath: "out.lua", Playbook: "--"})
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	src := `print("a", 1)
io.write("b ", 2, "\nc")
log("logged")
io.write(" d\ne")
report.table{ by = "round", title = "T" }
io.write("f")`
	if _, err := RunPlaybook(ctx, "out.lua", src, Env{Run: run, Out: out}); err != nil {
		t.Fatal(err)
	}
	run.Finish(ctx, record.StatusOK, "")
	if !strings.HasPrefix(out.String(), "a\t1\nb 2\nc d\ne") {
		t.Errorf("output %q", out.String())
	}
	evs, err := st.Events(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		switch ev.Source {
		case record.SourcePrint, "playbook":
			got = append(got, ev.Source+":"+ev.Message)
		case record.SourceTable:
			opt, n, ok := record.TableOf(ev)
			if !ok || opt.By != "round" || opt.Title != "T" || n != 0 {
				t.Errorf("table event %+v", ev)
			}
			got = append(got, "table")
		}
	}
	want := "print:a\t1|print:b 2|playbook:logged|print:c d|table|print:ef"
	if strings.Join(got, "|") != want {
		t.Errorf("recorded %q\nwant     %q", strings.Join(got, "|"), want)
	}
}

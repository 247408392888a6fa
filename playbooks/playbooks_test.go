// Package playbooks holds wtd's Lua experiments; this test runs each one,
// shrunk with parameters, against the built-in target.
package playbooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/engine"
	"wtd/engine/store"
	"wtd/internal/testbin"
	"wtd/internal/testhost"
	"wtd/luabind"
)

// small are the parameters that make each playbook quick.
var small = map[string]map[string]string{
	"cache_sweep.lua":    {"docs": "3000", "reads": "300", "rounds": "2", "working_set": "1"},
	"write_pressure.lua": {"docs": "4000", "threads": "4", "batch": "500"},
	"eviction_sweep.lua": {"docs": "3000", "ops": "500", "threads": "2"},
	"tickets.lua":        {"docs": "3000", "ops": "1000", "threads": "8"},
	"ttl_offpeak.lua":    {"docs": "2000", "expiring": "3000", "doc_bytes": "500", "peak": "3", "night": "10", "threads": "2", "cache_gb": "0.25"},
}

// checks are what a playbook's shrunk run must show besides ok steps.
var checks = map[string]func(t *testing.T, out string){
	"ttl_offpeak.lua": checkTTLOffpeak,
}

func TestPlaybooksRun(t *testing.T) {
	files, err := filepath.Glob("*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no playbooks: %v", err)
	}
	bin := testbin.Minimongod(t)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			params, ok := small[f]
			if !ok {
				t.Fatalf("%s has no small parameters in this test: add them", f)
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(src), "-- "+f+":") {
				t.Errorf("%s does not start with its header comment", f)
			}
			ctx := context.Background()
			st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close(ctx)
			var out strings.Builder
			r, err := engine.StartRun(ctx, engine.Config{Store: st, Host: testhost.New(t), MongodBinary: bin, Dir: t.TempDir()},
				engine.RunInfo{PlaybookPath: f, Playbook: string(src)})
			if err != nil {
				t.Fatal(err)
			}
			_, perr := luabind.RunPlaybook(ctx, f, string(src), luabind.Env{Run: r, Overrides: params, Out: &out})
			status := engine.StatusOK
			if perr != nil {
				status = engine.StatusFailed
			}
			if err := r.Finish(ctx, status, ""); err != nil {
				t.Error(err)
			}
			if perr != nil {
				t.Fatalf("%s: %v\n%s", f, perr, out.String())
			}
			steps := r.Steps()
			if len(steps) < 2 {
				t.Fatalf("%s recorded %d steps", f, len(steps))
			}
			for _, s := range steps {
				if s.Status != engine.StatusOK || s.Server == nil || s.Settings == nil {
					t.Errorf("step %s: status %s, server deltas %v, settings %v", s.Name, s.Status, s.Server != nil, s.Settings != nil)
				}
			}
			if !strings.Contains(out.String(), steps[len(steps)-1].Name) {
				t.Errorf("%s printed no report table:\n%s", f, out.String())
			}
			if check := checks[f]; check != nil {
				check(t, out.String())
			}
		})
	}
}

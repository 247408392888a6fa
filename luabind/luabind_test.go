package luabind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
	"wtd/hostctl"
	"wtd/internal/testbin"
	"wtd/internal/testhost"
)

// The minimongod the tests start, built once per test binary into a temp

func serverBinary(t *testing.T) string { return testbin.Minimongod(t) }

// syncBuffer is written by the engine's goroutines and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testRun is a real run on a real store in a temp dir.
type testRun struct {
	run  *engine.Run
	st   *store.Store
	out  *syncBuffer
	log  *syncBuffer
	host *hostctl.Host
}

type runOption func(*engine.Config)

// withServer lets the run start the built-in server.
func withServer(t *testing.T) runOption {
	return func(c *engine.Config) { c.MongodBinary = serverBinary(t) }
}

func withHost(h *hostctl.Host) runOption {
	return func(c *engine.Config) { c.Host = h }
}

func withSampler(d time.Duration) runOption {
	return func(c *engine.Config) { c.SampleInterval = d }
}

func newTestRun(t *testing.T, opts ...runOption) *testRun {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	tr := &testRun{st: st, out: &syncBuffer{}, log: &syncBuffer{}, host: testhost.New(t)}
	cfg := engine.Config{Store: st, Host: tr.host, Dir: t.TempDir(), Log: tr.log}
	for _, o := range opts {
		o(&cfg)
	}
	tr.host = cfg.Host
	tr.run, err = engine.StartRun(ctx, cfg, engine.RunInfo{PlaybookPath: "test.lua", Playbook: "-- test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.run.Finish(context.Background(), record.StatusAborted, "test cleanup") })
	return tr
}

func (tr *testRun) env(overrides map[string]string) Env {
	return Env{Run: tr.run, Overrides: overrides, Out: tr.out, Host: tr.host}
}

// runFile runs testdata/name.
func (tr *testRun) runFile(t *testing.T, name string, env Env) (map[string]any, error) {
	t.Helper()
	path := filepath.Join("testdata", name)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return RunPlaybook(context.Background(), path, string(src), env)
}

// mustRunFile runs testdata/name and fails the test on an error.
func (tr *testRun) mustRunFile(t *testing.T, name string, env Env) map[string]any {
	t.Helper()
	p, err := tr.runFile(t, name, env)
	if err != nil {
		t.Fatalf("%s: %v\n--- output:\n%s--- events:\n%s", name, err, tr.out.String(), tr.log.String())
	}
	return p
}

func wantPrefix(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one starting with %q", prefix)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error %q does not start with %q", err, prefix)
	}
}

func wantContains(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

func TestSyntaxErrorNamesPathAndLine(t *testing.T) {
	tr := newTestRun(t)
	for _, tc := range []struct{ src, prefix string }{
		{"local x = 1\nx = = 2\n", "inline.lua:2: syntax error near '='"},
		{"local x = 1\nif x then\n", "inline.lua:3: syntax error at the end of the file"},
		{"local s = 'open\n", "inline.lua:2: syntax error near 'open': unterminated string"},
		{"goto nowhere\n", "inline.lua:2: no visible label 'nowhere'"},
	} {
		_, err := RunPlaybook(context.Background(), "inline.lua", tc.src, tr.env(nil))
		wantPrefix(t, err, tc.prefix)
		var se *ScriptError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %T is not a *ScriptError", tc.src, err)
		}
	}
}

func TestRuntimeErrorsNamePlaybookLine(t *testing.T) {
	tr := newTestRun(t)
	for _, tc := range []struct {
		src, prefix string
		subs        []string
	}{
		{"local a = 1\nerror('boom')\n", "inline.lua:2: boom", nil},
		{"\n\nmongod.start{ cachesize = 1 }\n", "inline.lua:3: mongod.start: unknown option \"cachesize\"",
			[]string{"allowed: args, cacheSizeGB, dbpath, engineConfig, port, setParameter, syncdelay"}},
		{"mongod.start{ cacheSizeGB = '1' }\n", "inline.lua:1: mongod.start: cacheSizeGB must be a number, got string \"1\"", nil},
		{"\nmongod.start{ port = 1.5 }\n", "inline.lua:2: mongod.start: port must be a whole number", nil},
		{"mongod.connect{}\n", "inline.lua:1: mongod.connect: uri is required", nil},
		// The URI is refused before any dial: the message is the URI check's.
		{"\nmongod.connect{ uri = 'mongodb://10.1.2.3:27017' }\n", `inline.lua:2: mongod.connect: connect 10.1.2.3:27017: check address "10.1.2.3:27017": "10.1.2.3" is not a loopback address; only loopback targets (127.0.0.0/8, ::1, localhost) are allowed`, nil},
		{"\n\nsleep(-1)\n", "inline.lua:3: bad argument #1 to sleep", []string{"out of range [0, 86400]"}},
		{"step{ run = function() end }\n", "inline.lua:1: step: name is required", nil},
		{"step{ name = 'x' }\n", "inline.lua:1: step x: run = function() ... end is required", nil},
		{"step{ name = 'x', server = 1, run = function() end }\n", "inline.lua:1: step: server must be a server handle", nil},
		{"report.table{ bye = 'x' }\n", "inline.lua:1: report.table: unknown option \"bye\"; did you mean by? (allowed: by, title, verdict)", nil},
	} {
		_, err := RunPlaybook(context.Background(), "inline.lua", tc.src, tr.env(nil))
		wantPrefix(t, err, tc.prefix)
		wantContains(t, err, tc.subs...)
	}
}

func TestParams(t *testing.T) {
	tr := newTestRun(t)
	overrides := map[string]string{"docs": "5", "verbose": "1", "label": "hello world", "sizes": "0.25,2", "modes": "x, y", "hex": "0x10"}
	got := tr.mustRunFile(t, "params_test.lua", tr.env(overrides))
	want := map[string]any{"docs": 5.0, "rate": 1.5, "verbose": true, "quiet": false, "label": "hello world",
		"sizes": []any{0.25, 2.0}, "modes": []any{"x", "y"}, "empty": []any{}, "hex": 16.0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("params = %v\nwant %v", got, want)
	}
	if rec := tr.run.Params(); fmt.Sprint(rec) != fmt.Sprint(want) {
		t.Errorf("recorded params = %v\nwant %v", rec, want)
	}
}

func TestParamErrors(t *testing.T) {
	const decl = "local p = params{ docs = 600000, label = 'x', verbose = false, sizes = {0.25, 0.5} }\n"
	for _, tc := range []struct {
		name      string
		src       string
		overrides map[string]string
		subs      []string
		want      ParamError // the fields compared
	}{
		{"unknown name", decl, map[string]string{"doc": "1"},
			[]string{`inline.lua:1: params: unknown parameter "doc"`, "the playbook's parameters are docs, label, sizes, verbose"},
			ParamError{Name: "doc", Value: "1", Known: []string{"docs", "label", "sizes", "verbose"}}},
		{"bad number", decl, map[string]string{"docs": "lots"},
			[]string{`parameter docs: -p docs=lots: "lots" is not a number (the default is 600000)`},
			ParamError{Name: "docs", Value: "lots", Want: "number"}},
		{"inf is no number", decl, map[string]string{"docs": "inf"},
			[]string{`"inf" is not a number`}, ParamError{Name: "docs", Value: "inf", Want: "number"}},
		{"bad boolean", decl, map[string]string{"verbose": "yes"},
			[]string{`parameter verbose: -p verbose=yes: "yes" is not a boolean (true, false, 1 or 0)`},
			ParamError{Name: "verbose", Value: "yes", Want: "boolean (true, false, 1 or 0)"}},
		{"bad list item", decl, map[string]string{"sizes": "0.25,big"},
			[]string{`parameter sizes: -p sizes=0.25,big: "0.25,big" is not a list of numbers (item "big" is not a number) (the default is {0.25, 0.5})`},
			ParamError{Name: "sizes", Value: "0.25,big", Want: `list of numbers (item "big" is not a number)`}},
		{"no params declared", "log('hello')\n", map[string]string{"docs": "1"},
			[]string{`unknown parameter "docs" (-p docs=...): the playbook declares no parameters`},
			ParamError{Name: "docs", Value: "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRun(t)
			_, err := RunPlaybook(context.Background(), "inline.lua", tc.src, tr.env(tc.overrides))
			wantContains(t, err, tc.subs...)
			var pe *ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("errors.As(%v, *ParamError) = false", err)
			}
			if pe.Name != tc.want.Name || pe.Value != tc.want.Value || pe.Want != tc.want.Want ||
				strings.Join(pe.Known, ",") != strings.Join(tc.want.Known, ",") {
				t.Errorf("ParamError = %+v, want %+v", *pe, tc.want)
			}
		})
	}
}

func TestParamDeclarationErrors(t *testing.T) {
	tr := newTestRun(t)
	for _, tc := range []struct{ src, prefix string }{
		{"params{ a = function() end }\n", "inline.lua:1: params: a: the default is a function"},
		{"params{ a = { x = 1 } }\n", "inline.lua:1: params: a: a table default must be a list"},
		{"params{ a = { 1, 'b' } }\n", "inline.lua:1: params: a: a list default holds only numbers or only strings"},
		{"params{ 5 }\n", "inline.lua:1: params: parameter names must be strings"},
		{"params{ a = 1 }\n\nparams{ b = 1 }\n", "inline.lua:3: params: called twice"},
	} {
		_, err := RunPlaybook(context.Background(), "inline.lua", tc.src, tr.env(nil))
		wantPrefix(t, err, tc.prefix)
		var pe *ParamError
		if errors.As(err, &pe) {
			t.Errorf("%q: a declaration error is a ParamError: %v", tc.src, err)
		}
	}
}

func TestSandbox(t *testing.T) {
	tr := newTestRun(t)
	if err := os.Symlink("/etc", filepath.Join(tr.run.Dir(), "etc-link")); err != nil {
		t.Fatal(err)
	}
	tr.mustRunFile(t, "sandbox_test.lua", tr.env(nil))
	out := tr.out.String()
	for _, want := range []string{"written 42\n", "printed\t1\ttrue\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q does not contain %q", out, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(tr.run.Dir(), "top.txt"))
	if err != nil || string(b) != "line 1\nline 2\n" {
		t.Errorf("top.txt = %q, %v", b, err)
	}
}

func TestSandboxRefusalsFailThePlaybook(t *testing.T) {
	tr := newTestRun(t)
	for _, tc := range []struct{ src, prefix string }{
		{"\nos.execute('true')\n", "inline.lua:2: os.execute is not available in a playbook: a playbook runs no commands"},
		{"io.popen('ls')\n", "inline.lua:1: io.popen is not available in a playbook"},
		{"os.exit(1)\n", "inline.lua:1: os.exit is not available in a playbook"},
		{"os.remove('x')\n", "inline.lua:1: os.remove is not available in a playbook"},
		{"os.rename('x', 'y')\n", "inline.lua:1: os.rename is not available in a playbook"},
		{"dofile('/etc/passwd')\n", "inline.lua:1: dofile is not available in a playbook"},
		{"loadfile('/etc/passwd')\n", "inline.lua:1: loadfile is not available in a playbook"},
		{"require('os')\n", "inline.lua:1: require is not available in a playbook"},
		{"io.open('/etc/passwd')\n", "inline.lua:1: io.open: /etc/passwd is outside the run's directory"},
		{"io.lines()\n", "inline.lua:1: io.lines without a file is not available"},
		{"debug.getinfo(1)\n", "inline.lua:1: attempt to index a non-table object(nil)"},
	} {
		_, err := RunPlaybook(context.Background(), "inline.lua", tc.src, tr.env(nil))
		wantPrefix(t, err, tc.prefix)
	}
}

func TestCancelStopsSleep(t *testing.T) {
	tr := newTestRun(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("interrupt: SIGINT")
	timer := time.AfterFunc(200*time.Millisecond, func() { cancel(cause) })
	defer timer.Stop()
	start := time.Now()
	_, err := RunPlaybook(ctx, "inline.lua", "log('before')\nsleep(60)\nlog('after')\n", tr.env(nil))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the playbook stopped %s after the start, want promptly after the cancel at 200 ms", took)
	}
	wantPrefix(t, err, "inline.lua:2: sleep: interrupted (interrupt: SIGINT)")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, context.Canceled) = false", err)
	}
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is(%v, cause) = false", err)
	}
	if ev := tr.log.String(); !strings.Contains(ev, "playbook before") || strings.Contains(ev, "playbook after") {
		t.Errorf("events = %q, want only the line before the sleep", ev)
	}
}

func TestCancelStopsBusyLoop(t *testing.T) {
	tr := newTestRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := RunPlaybook(ctx, "inline.lua", "local i = 0\nwhile true do\n  i = i + 1\nend\n", tr.env(nil))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the loop stopped after %s", took)
	}
	wantPrefix(t, err, "inline.lua:")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, context.Canceled) = false", err)
	}
}

func TestLog(t *testing.T) {
	tr := newTestRun(t)
	if _, err := RunPlaybook(context.Background(), "inline.lua", "log('cache', 0.25, true, nil)\n", tr.env(nil)); err != nil {
		t.Fatal(err)
	}
	if out := tr.out.String(); out != "" {
		t.Errorf("log printed %q to the output too; the run's log shows events", out)
	}
	if ev := tr.log.String(); !strings.Contains(ev, "playbook cache 0.25 true nil") {
		t.Errorf("events %q lack the log line", ev)
	}
}

func TestReport(t *testing.T) {
	tr := newTestRun(t)
	tr.mustRunFile(t, "report_test.lua", tr.env(nil))
	out := tr.out.String()
	for _, want := range []string{"report test", "alpha", "beta", "repetitions (ops/s)", "110"} {
		if !strings.Contains(out, want) {
			t.Errorf("report output lacks %q:\n%s", want, out)
		}
	}
}

func TestHostWithFixtureProc(t *testing.T) {
	proc := t.TempDir()
	meminfo := "MemTotal:       16384 kB\nMemFree:         4096 kB\nMemAvailable:    8192 kB\nCached:          2048 kB\n"
	if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte(meminfo), 0o644); err != nil {
		t.Fatal(err)
	}
	// No <proc>/sys/vm/drop_caches: the drop cannot happen, even as root.
	h := &hostctl.Host{ProcRoot: proc, SysRoot: t.TempDir()}
	tr := newTestRun(t, withHost(h))
	tr.mustRunFile(t, "host_test.lua", tr.env(nil))
	if ev := tr.log.String(); !strings.Contains(ev, "could not drop the page cache") {
		t.Errorf("events lack the failed drop:\n%s", ev)
	}
}

func TestHostReal(t *testing.T) {
	tr := newTestRun(t)
	src := `local m = host.meminfo()
assert(m.mem_total > 0, "mem_total")
local f = host.facts()
assert(f.logical_cores >= 1, "logical_cores")
assert(f.mem_total_bytes == m.mem_total, "mem_total_bytes")
assert(type(f.kernel_release) == "string" and #f.kernel_release > 0, "kernel_release")
`
	if _, err := RunPlaybook(context.Background(), "inline.lua", src, tr.env(nil)); err != nil {
		t.Fatal(err)
	}
}

func TestMongod(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	var mu sync.Mutex
	labels := map[string]int{}
	env := tr.env(map[string]string{"ops": "1000"})
	env.Progress = func(label string, done, total int64, _ time.Duration) {
		mu.Lock()
		labels[label]++
		mu.Unlock()
	}
	tr.mustRunFile(t, "mongod_test.lua", env)
	mu.Lock()
	defer mu.Unlock()
	for _, l := range []string{"load bench.c", "workload bench.c"} {
		if labels[l] == 0 {
			t.Errorf("no progress for %q (got %v)", l, labels)
		}
	}
}

func TestStep(t *testing.T) {
	tr := newTestRun(t, withServer(t), withSampler(250*time.Millisecond))
	tr.mustRunFile(t, "step_test.lua", tr.env(nil))
	steps := tr.run.Steps()
	if len(steps) != 4 {
		t.Fatalf("%d steps recorded, want 4", len(steps))
	}
	for i, st := range steps[:2] {
		if st.Name != "reads" || st.Status != record.StatusOK {
			t.Errorf("step %d = %s %s, want reads ok", i, st.Name, st.Status)
		}
		if st.Labels["round"] != float64(i+1) || st.Labels["cacheSizeGB"] != 0.25 {
			t.Errorf("step %d labels = %v", i, st.Labels)
		}
		res, ok := st.Result.(workload.Result)
		if !ok {
			t.Fatalf("step %d result is %T, want workload.Result", i, st.Result)
		}
		if res.Ops[workload.OpRead].Count != 1000 {
			t.Errorf("step %d read count = %d", i, res.Ops[workload.OpRead].Count)
		}
		if st.Server == nil || st.Settings == nil || st.Settings.CacheMaxBytes != 268435456 || st.Provenance == nil {
			t.Errorf("step %d lacks server deltas, settings or provenance: %+v", i, st)
		} else if v := record.MeasuresOf(st).PagesReadPerOp; v == nil {
			t.Errorf("step %d has no pages read/op (server deltas %+v)", i, st.Server)
		}
	}
	if res, ok := steps[2].Result.(map[string]any); !ok || fmt.Sprint(res["total"]) != "map[count:5 ops_per_sec:10]" {
		t.Errorf("plain step result = %#v", steps[2].Result)
	}
	if steps[2].Labels["note"] != "x" || steps[2].Provenance == nil || steps[2].Provenance.NS != "bench.c" {
		t.Errorf("plain step = %+v", steps[2])
	}
	if st := steps[3]; st.Name != "boom" || st.Status != record.StatusFailed || !strings.Contains(st.Error, "kaboom") {
		t.Errorf("failing step = %s %s %q", st.Name, st.Status, st.Error)
	}
	out := tr.out.String()
	for _, want := range []string{"step test", "reads", "plain", "boom", "0.25"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestFailingStepFailsPlaybook(t *testing.T) {
	tr := newTestRun(t)
	src := "log('reached')\nlocal n = 0\nstep{ name = 'bad', round = 1, run = function()\n  n = n + 1\n  error('nope')\nend }\nlog('not reached')\n"
	_, err := RunPlaybook(context.Background(), "inline.lua", src, tr.env(nil))
	wantPrefix(t, err, "inline.lua:5: nope")
	steps := tr.run.Steps()
	if len(steps) != 1 || steps[0].Status != record.StatusFailed || !strings.Contains(steps[0].Error, "inline.lua:5: nope") {
		t.Fatalf("steps = %+v", steps)
	}
	// log() records events: the one before the step is there (so the
	// check below can fail), the one after it is not.
	if !strings.Contains(tr.log.String(), "reached") {
		t.Fatalf("log() before the step was not recorded:\n%s", tr.log.String())
	}
	if strings.Contains(tr.log.String(), "not reached") {
		t.Error("the playbook went on after the failing step")
	}
}

func TestRestartAttachedIsErrAttached(t *testing.T) {
	tr := newTestRun(t, withServer(t))
	s, err := tr.run.StartServer(context.Background(), engine.ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("local a = mongod.connect{ uri = %q }\na:restart{ cacheSizeGB = 1 }\n", s.URI())
	_, err = RunPlaybook(context.Background(), "inline.lua", src, tr.env(nil))
	wantPrefix(t, err, "inline.lua:2: restart: cannot restart a server attached with mongod.connect")
	if !errors.Is(err, engine.ErrAttached) {
		t.Errorf("errors.Is(%v, engine.ErrAttached) = false", err)
	}
}

// TestCreateIndexAndDates: m:create_index makes TTL, compound and unique
// indexes; m:load and m:workload write date fields spread over a window
// (or at a moment), keeping doc_bytes; the TTL monitor deletes what
// expired and nothing else.
func TestCreateIndexAndDates(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	tr.mustRunFile(t, "ttl_test.lua", tr.env(nil))
}

func TestCreateIndexAndDateErrors(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	for _, tc := range []struct{ src, want string }{
		{`m:create_index{ ns = "t.c", key = { a = 1, b = 1 } }`, "a compound key needs its order"},
		{`m:create_index{ ns = "t.c" }`, "create_index: key is required"},
		{`m:create_index{ ns = "t.c", key = "a", expire = 1 }`, `unknown option "expire"`},
		{`m:create_index{ ns = "t.c", key = { {"a", 1}, {"b", 1} }, expireAfterSeconds = 5 }`, "expireAfterSeconds needs a single-field key"},
		{`m:load{ ns = "t.c", docs = 1, doc_bytes = 100, date = { field = "a.b" } }`, `date field "a.b"`},
		{`m:load{ ns = "t.c", docs = 1, doc_bytes = 100, date = { field = "d", from = 10, to = 5 } }`, "is before from"},
		{`m:load{ ns = "t.c", docs = 1, doc_bytes = 100, date = { field = "d", at = 5 } }`, `load: date: unknown option "at"`},
		{`m:workload{ ns = "t.c", ops = 1, mix = { insert = 1 }, doc_bytes = 100, date = { to = 5 } }`, "date.field is required"},
	} {
		src := "local m = mongod.start{}\n" + tc.src + "\n"
		_, err := RunPlaybook(context.Background(), "idx.lua", src, tr.env(nil))
		wantContains(t, err, "idx.lua:2:", tc.want)
	}
}

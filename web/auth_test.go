package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/schedule"
)

// recordingScheduler is a scheduler with one schedule "a" that fires and
// runs that abort; it records every call that changes something.
type recordingScheduler struct {
	token string

	mu    sync.Mutex
	calls []string
}

func (f *recordingScheduler) Config() schedule.Config { return schedule.Config{Token: f.token} }
func (f *recordingScheduler) Status(int) ([]schedule.ScheduleStatus, []schedule.WindowStatus) {
	return []schedule.ScheduleStatus{{Name: "a", Cron: "@daily"}}, nil
}
func (f *recordingScheduler) Current() (int64, string) { return 0, "" }

func (f *recordingScheduler) FireNow(_ context.Context, name string) (int64, error) {
	f.record("fire " + name)
	if name != "a" {
		return 0, schedule.ErrUnknown
	}
	return 42, nil
}

func (f *recordingScheduler) Abort(id int64, _ error) bool {
	f.record(fmt.Sprintf("abort %d", id))
	return true
}

func (f *recordingScheduler) record(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

// take returns the calls recorded since the last take.
func (f *recordingScheduler) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.calls
	f.calls = nil
	return calls
}

// wildcard is a {name}, {name...} or {$} of a route's pattern.
var wildcard = regexp.MustCompile(`\{([^}]*)\}`)

// routeRequest splits a route's pattern into its method ("" when it
// takes any) and a path with each wildcard given its value in values.
func routeRequest(pattern string, values map[string]string) (method, path string, err error) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	path = path[strings.Index(path, "/"):] // a pattern may name a host first
	var missing []string
	path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
		name := strings.TrimSuffix(w[1:len(w)-1], "...")
		if name == "$" {
			return ""
		}
		v, ok := values[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", "", fmt.Errorf("route %q: the test has no value for %v: add one", pattern, missing)
	}
	return method, path, nil
}

// mutatingRoutes returns the routes of api that are not GETs, each with
// the method and path a request to it takes (a route without a method is
// tried with POST).
func mutatingRoutes(t *testing.T, api *Server, values map[string]string) (patterns, methods, paths []string) {
	t.Helper()
	for _, pattern := range api.mux.patterns {
		method, path, err := routeRequest(pattern, values)
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodGet || method == http.MethodHead {
			continue
		}
		if method == "" {
			method = http.MethodPost
		}
		patterns, methods, paths = append(patterns, pattern), append(methods, method), append(paths, path)
	}
	for _, want := range []string{"POST /api/v1/schedules/{name}/run", "POST /api/v1/runs/{id}/abort", "POST /api/v1/import"} {
		if !slices.Contains(patterns, want) {
			t.Fatalf("route %s is not among the mutating routes found: %v (all routes: %v)", want, patterns, api.mux.patterns)
		}
	}
	return patterns, methods, paths
}

// authCase is a request's headers and what a mutating route must answer.
type authCase struct {
	name   string
	header map[string]string
	code   int // 0: not refused, and it acts
}

// TestEveryMutatingRouteRefusesStrangers goes through every route the
// server registers; each that is not a GET must, with a token_file,
// refuse a missing token, a wrong one, one of another scheme, and a page
// of another origin (or of none, "null") even with the right token, and
// without a token_file still refuse another origin (401 or 403, JSON);
// a refused call does not act (the scheduler sees no call). With the right token (or none needed), from no page or from
// the API's own, it acts.
func TestEveryMutatingRouteRefusesStrangers(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	running, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "p.lua", Playbook: "-- p", StartedAt: time.Now(), Trigger: "schedule a"})
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"name": "a", "id": fmt.Sprint(running)}
	bearer := map[string]string{"Authorization": "Bearer s3cret"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for hk, hv := range h {
			out[hk] = hv
		}
		return out
	}
	for _, cfg := range []struct {
		token string
		cases func(ownOrigin string) []authCase
	}{
		{"s3cret", func(own string) []authCase {
			return []authCase{
				{"no token", nil, 401},
				{"wrong token", map[string]string{"Authorization": "Bearer s3cre"}, 401},
				{"longer token", map[string]string{"Authorization": "Bearer s3cret2"}, 401},
				{"token of another scheme", map[string]string{"Authorization": "Basic s3cret"}, 401},
				{"token alone", map[string]string{"Authorization": "s3cret"}, 401},
				{"foreign origin with the token", with(bearer, "Origin", "http://evil.example"), 403},
				{"origin null with the token", with(bearer, "Origin", "null"), 403},
				{"foreign origin without a token", map[string]string{"Origin": "http://evil.example"}, 403},
				{"right token", bearer, 0},
				{"right token from the API's own page", with(bearer, "Origin", own), 0},
			}
		}},
		{"", func(own string) []authCase {
			return []authCase{
				{"foreign origin", map[string]string{"Origin": "http://evil.example"}, 403},
				{"origin null", map[string]string{"Origin": "null"}, 403},
				{"no origin", nil, 0},
				{"the API's own page", map[string]string{"Origin": own}, 0},
			}
		}},
	} {
		sched := &recordingScheduler{token: cfg.token}
		api := New(Options{Store: st, Scheduler: sched})
		srv := httptest.NewServer(api)
		t.Cleanup(srv.Close)
		patterns, methods, paths := mutatingRoutes(t, api, values)
		for i, pattern := range patterns {
			for _, tc := range cfg.cases(srv.URL) {
				t.Run(fmt.Sprintf("token %q/%s/%s", cfg.token, pattern, tc.name), func(t *testing.T) {
					req, _ := http.NewRequest(methods[i], srv.URL+paths[i], nil)
					for k, v := range tc.header {
						req.Header.Set(k, v)
					}
					code, body := do(t, req)
					calls := sched.take()
					if pattern == "POST /api/v1/import" && code == 400 {
						// The upload acts without the scheduler: let in,
						// it says the empty body is no FTDC file.
						calls = append(calls, "import")
					}
					if tc.code == 0 {
						if code == 401 || code == 403 || len(calls) == 0 {
							t.Errorf("%s %s: %d %v, scheduler calls %v; want it to act", methods[i], paths[i], code, body, calls)
						}
						return
					}
					if code != tc.code || body["error"] == nil {
						t.Errorf("%s %s: %d %v, want %d with a JSON error", methods[i], paths[i], code, body, tc.code)
					}
					if len(calls) > 0 {
						t.Errorf("%s %s (%s) acted: scheduler calls %v", methods[i], paths[i], tc.name, calls)
					}
				})
			}
		}
	}
}

package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"wtd/engine/store"
	"wtd/schedule"
)

// fakeScheduler answers as a scheduler with one schedule "a" whose fires
// are busy.
type fakeScheduler struct{ token string }

func (f fakeScheduler) Config() schedule.Config { return schedule.Config{Token: f.token} }
func (f fakeScheduler) Status(int) ([]schedule.ScheduleStatus, []schedule.WindowStatus) {
	return []schedule.ScheduleStatus{{Name: "a", Cron: "@daily"}}, nil
}
func (f fakeScheduler) FireNow(_ context.Context, name string) (int64, error) {
	if name != "a" {
		return 0, schedule.ErrUnknown
	}
	return 0, &schedule.BusyError{Holder: "run 7 of x.lua (pid 1) holds the experiment lock", RunID: 7}
}
func (f fakeScheduler) Abort(int64, error) bool  { return false }
func (f fakeScheduler) Current() (int64, string) { return 0, "" }

func testServer(t *testing.T, token string) *httptest.Server {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	srv := httptest.NewServer(New(Options{Store: st, Scheduler: fakeScheduler{token: token}}))
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%s %s: content type %q", req.Method, req.URL, resp.Header.Get("Content-Type"))
	}
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// TestErrorsAreJSON: every error, the router's own included, is JSON
// {error} with its status; a busy fire names the holder.
func TestErrorsAreJSON(t *testing.T) {
	srv := testServer(t, "")
	for _, tc := range []struct {
		method, path string
		code         int
		want         string
	}{
		{"POST", "/api/v1/schedules/a/run", 409, "run 7 of x.lua"},
		{"POST", "/api/v1/schedules/b/run", 404, "not defined"},
		{"PUT", "/api/v1/schedules", 405, "method not allowed"},
		{"GET", "/no/such/page", 404, "not found"},
		{"GET", "/api/v1/runs/0", 400, "positive number"},
		{"GET", "/api/v1/runs/5/samples", 404, "no run 5"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		code, body := do(t, req)
		if code != tc.code || !strings.Contains(body["error"].(string), tc.want) {
			t.Errorf("%s %s: %d %v, want %d and %q", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
}

// TestMutatingCallsNeedTheToken: with a token, POSTs need it as a bearer
// token and GETs do not; a browser's cross-origin POST is refused; a Host
// that is not loopback is refused on a loopback listener.
func TestMutatingCallsNeedTheToken(t *testing.T) {
	srv := testServer(t, "s3cret")
	post := func(header map[string]string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/schedules/a/run", nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		code, _ := do(t, req)
		return code
	}
	if code := post(nil); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code := post(map[string]string{"Authorization": "Bearer nope"}); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	if code := post(map[string]string{"Authorization": "Bearer s3cret"}); code != 409 {
		t.Errorf("right token: %d, want 409 (busy)", code)
	}
	if code := post(map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}); code != 403 {
		t.Errorf("cross-origin: %d", code)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/schedules", nil)
	if code, _ := do(t, req); code != 200 {
		t.Errorf("GET without a token: %d", code)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	req, _ = http.NewRequest("GET", srv.URL+"/healthz", nil)
	req.Host = "rebound.example:" + port
	if code, body := do(t, req); code != 403 || !strings.Contains(body["error"].(string), "Host") {
		t.Errorf("foreign Host: %d %v", code, body)
	}
}

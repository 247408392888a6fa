package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/engine/ftdcimport"
	"wtd/engine/store"
)

const ftdcData = "../internal/ftdc/testdata/"

// Real FTDC files (internal/ftdc/testdata/SOURCES.md says what each is).
const (
	// An 8.0.15 replica set member's interim file: 101 samples.
	ftdc8015 = ftdcData + "8.0.15/PHieu160105+mongodb_replica--metrics.interim"
	// A 4.0.6 archive file: 307 samples.
	ftdc406 = ftdcData + "4.0.6/Im-neko+mongo-replica--metrics.2019-03-15T19-37-17Z-00000"
	// A 3.4.1 interim file: 121 samples.
	ftdc341 = ftdcData + "3.4.1/CodingGuruInTraining+WebLab10--metrics.interim"
)

// importServer is an API with token s3cret whose uploads are capped at
// limit bytes, and its store.
func importServer(t *testing.T, limit int64) (*httptest.Server, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	srv := httptest.NewServer(New(Options{Store: st, Scheduler: fakeScheduler{token: "s3cret"}, MaxImportBytes: limit}))
	t.Cleanup(srv.Close)
	return srv, st
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upload posts body to /api/v1/import with query and headers, and returns
// the status and the body as it came.
func upload(t *testing.T, srv *httptest.Server, query string, body io.Reader, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/api/v1/import"+query, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func errorOf(t *testing.T, b []byte) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
		t.Fatalf("want a JSON error, got %s (%v)", b, err)
	}
	return e.Error
}

func runCount(t *testing.T, st *store.Store) int {
	t.Helper()
	runs, err := st.ListRuns(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

var bearer = map[string]string{"Authorization": "Bearer s3cret"}

// TestImportUploadRefuses: without the token, with a wrong one, from a page
// of another origin, over the cap (declared or not), not FTDC, empty: each
// refused with its status and a JSON error that says why, and no run made.
func TestImportUploadRefuses(t *testing.T) {
	srv, st := importServer(t, 40_000)
	file := readFile(t, ftdc8015) // 45,715 bytes: over the cap
	small := readFile(t, ftdc341) // 11,688 bytes
	for _, tc := range []struct {
		name   string
		query  string
		body   func() io.Reader
		header map[string]string
		code   int
		want   string
	}{
		{"no token", "", func() io.Reader { return bytes.NewReader(small) }, nil, 401, "bearer token"},
		{"wrong token", "", func() io.Reader { return bytes.NewReader(small) }, map[string]string{"Authorization": "Bearer s3cre"}, 401, "bearer token"},
		{"foreign origin", "", func() io.Reader { return bytes.NewReader(small) }, map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}, 403, "cross-origin"},
		{"too large", "", func() io.Reader { return bytes.NewReader(file) }, bearer, 413, "larger than this daemon takes (40000 bytes)"},
		// Without a Content-Length the cap is found while reading.
		{"too large, length not said", "", func() io.Reader { return io.MultiReader(bytes.NewReader(file)) }, bearer, 413, "larger than this daemon takes"},
		{"not FTDC", "?file=notes.txt", func() io.Reader {
			return strings.NewReader("these are notes, not metrics: a text file of some length\n")
		}, bearer, 400, "notes.txt is not an FTDC file"},
		{"empty", "", func() io.Reader { return strings.NewReader("") }, bearer, 400, "the body is empty"},
		{"a path as its name", "?file=../x", func() io.Reader { return bytes.NewReader(small) }, bearer, 400, "want a file's base name"},
		{"bad server name", "?name=a%20b", func() io.Reader { return bytes.NewReader(small) }, bearer, 400, `name "a b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := upload(t, srv, tc.query, tc.body(), tc.header)
			if msg := errorOf(t, b); code != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("%d %q, want %d saying %q", code, msg, tc.code, tc.want)
			}
			if n := runCount(t, st); n != 0 {
				t.Errorf("%d runs made by a refused upload", n)
			}
		})
	}
}

// TestImportUploadMakesRuns: a real file as the body makes its run, with
// the answer of wtd import --json, named by the upload's own name; the same
// file again makes nothing; several files as multipart make a run each, a
// part that is not FTDC is named, and the dashboard lists what was
// imported.
func TestImportUploadMakesRuns(t *testing.T) {
	srv, st := importServer(t, 0)
	code, b := upload(t, srv, "?file=metrics.interim&name=prod1", bytes.NewReader(readFile(t, ftdc8015)), bearer)
	var res []ftdcimport.Result
	if err := json.Unmarshal(b, &res); err != nil || code != 201 || len(res) != 1 {
		t.Fatalf("%d %s (%v), want 201 and one run", code, b, err)
	}
	r := res[0]
	if r.Run < 1 || r.Path != "metrics.interim" || r.Version != "8.0.15" || r.Samples != 101 || r.Skipped == nil || len(r.Skipped) != 0 || r.First.IsZero() {
		t.Errorf("result %+v, want run, path metrics.interim, 8.0.15, 101 samples, nothing skipped", r)
	}
	run, err := st.GetRun(context.Background(), r.Run)
	if err != nil || run.Trigger != "import" || run.Status != store.StatusOK {
		t.Errorf("run %+v (%v), want an ok run triggered by import", run, err)
	}
	if n, err := st.SourceSampleCount(context.Background(), r.Run, "server:prod1"); err != nil || n != 101 {
		t.Errorf("%d samples of server:prod1 (%v), want 101", n, err)
	}
	if got := runCount(t, st); got != 1 {
		t.Fatalf("%d runs, want 1", got)
	}

	// The same file again, under another name: nothing new.
	code, b = upload(t, srv, "?file=copy", bytes.NewReader(readFile(t, ftdc8015)), bearer)
	if code != 200 || strings.TrimSpace(string(b)) != "[]" || runCount(t, st) != 1 {
		t.Errorf("again: %d %s, %d runs; want 200 [] and still 1 run", code, b, runCount(t, st))
	}

	// Several files at once.
	body, ct := multipartOf(t, map[string][]byte{
		"metrics.2019-03-15T19-37-17Z-00000": readFile(t, ftdc406),
		"metrics.interim":                    readFile(t, ftdc341),
	})
	code, b = upload(t, srv, "", body, map[string]string{"Authorization": "Bearer s3cret", "Content-Type": ct})
	res = nil
	if err := json.Unmarshal(b, &res); err != nil || code != 201 || len(res) != 2 {
		t.Fatalf("multipart: %d %s (%v), want 201 and two runs", code, b, err)
	}
	if res[0].Version != "4.0.6" || res[0].Samples != 307 || res[0].Path != "metrics.2019-03-15T19-37-17Z-00000" ||
		res[1].Version != "3.4.1" || res[1].Samples != 121 || res[1].Path != "metrics.interim" {
		t.Errorf("multipart runs %+v, want 4.0.6 (307 samples) then the interim 3.4.1 (121)", res)
	}
	body, ct = multipartOf(t, map[string][]byte{
		"metrics.2019-03-15T19-37-17Z-00000": readFile(t, ftdc406),
		"README.txt":                         []byte("not metrics, only a readme of some length to be sure"),
	})
	code, b = upload(t, srv, "", body, map[string]string{"Authorization": "Bearer s3cret", "Content-Type": ct})
	if msg := errorOf(t, b); code != 400 || !strings.Contains(msg, "README.txt is not an FTDC file") {
		t.Errorf("a part not FTDC: %d %q", code, msg)
	}
	if got := runCount(t, st); got != 3 {
		t.Errorf("%d runs, want 3", got)
	}

	// The dashboard lists them.
	for _, q := range []string{"/", "/?trigger=import"} {
		code, page := get(t, srv.URL+q)
		if rows := fmt.Sprint(rowsOf(page)); code != 200 || rows != "[3 2 1]" || strings.Count(page, "<td>import</td>") != 3 {
			t.Errorf("runs list %s: %d, rows %s, want the three imported runs\n%s", q, code, rows, page)
		}
	}
	if code, page := get(t, srv.URL+"/"); !strings.Contains(page, `href="/?trigger=import"`) {
		t.Errorf("runs list: %d, no link to the imported runs", code)
	}
	if code, page := get(t, fmt.Sprintf("%s/runs/%d", srv.URL, r.Run)); code != 200 || !strings.Contains(page, `id="wtd-data"`) || !strings.Contains(page, "Replication lag") {
		t.Errorf("imported run's page: %d, want its report with the replication-lag chart", code)
	}
}

func multipartOf(t *testing.T, files map[string][]byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("note", "a form field is passed over")
	for name, b := range files {
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

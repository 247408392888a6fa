package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/hostctl"
)

// TestResultsURIIsAnOutput: the results URI may name what an experiment
// target may not (other hosts, a replica set, mongodb+srv, TLS files),
// its options reach the driver, and no error quotes its password.
func TestResultsURIIsAnOutput(t *testing.T) {
	for _, uri := range []string{
		"mongodb://results.example.net:27017/",
		"mongodb://wtd:pw@db1.example.net,db2.example.net/?replicaSet=rs0&w=majority&authSource=admin",
		"mongodb+srv://wtd:pw@cluster0.example.net/?tls=true",
		"mongodb://10.1.2.3/?tls=true&tlsAllowInvalidHostnames=true",
	} {
		if err := CheckURI(uri); err != nil {
			t.Errorf("CheckURI(%s): %v, want it taken", uri, err)
		}
		if _, err := hostctl.CheckURI(uri); err == nil {
			t.Errorf("hostctl.CheckURI(%s) takes it: the test does not show the exception", uri)
		}
	}
	opts, err := clientOptions(Config{URI: "mongodb://db1.example.net,db2.example.net/?replicaSet=rs0&tls=true"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Hosts) != 2 || opts.ReplicaSet == nil || *opts.ReplicaSet != "rs0" || opts.TLSConfig == nil {
		t.Errorf("options of the URI: hosts %v, replica set %v, TLS %v: want them passed through", opts.Hosts, opts.ReplicaSet, opts.TLSConfig != nil)
	}
	for _, tc := range []struct{ uri, want string }{
		{"http://wtd:hunter2@results.example.net", `scheme "http"`},
		{"wtd:hunter2@results.example.net", "want \"mongodb://"},
		{"mongodb://wtd:hunter2@results.example.net/?w=banana&connectTimeoutMS=nope", "results URI mongodb://wtd:xxxxx@results.example.net/"},
	} {
		err := CheckURI(tc.uri)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckURI(%q): %v, want an error with %q and no password", tc.uri, err, tc.want)
		}
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("hunter2\n"), 0o600)
	opts, err = clientOptions(Config{URI: "mongodb://wtd@results.example.net/?authSource=admin", TokenFile: pw}, false)
	if err != nil || opts.Auth == nil || opts.Auth.Username != "wtd" || opts.Auth.Password != "hunter2" || opts.Auth.AuthSource != "admin" {
		t.Errorf("token_file: %+v, %v: want user wtd with the file's password", opts.Auth, err)
	}
	if err := (Config{URI: "mongodb://results.example.net/", TokenFile: pw}).Check(); err == nil || !strings.Contains(err.Error(), "names no user") {
		t.Errorf("token_file without a user: %v", err)
	}
	if err := (Config{URI: "mongodb://wtd:x@results.example.net/", TokenFile: pw}).Check(); err == nil || !strings.Contains(err.Error(), "token_file gives one too") {
		t.Errorf("a password twice: %v", err)
	}
	if err := (Config{URI: "mongodb://wtd@results.example.net/", TokenFile: filepath.Join(dir, "none")}).Check(); err == nil {
		t.Error("a token_file that does not exist is taken")
	}
}

func TestBackoffDoublesUpToItsMost(t *testing.T) {
	p := &Pusher{}
	var got []string
	for n := 1; n <= 9; n++ {
		got = append(got, p.Backoff(n).String())
	}
	want := "5s 10s 20s 40s 1m20s 2m40s 5m20s 10m0s 10m0s"
	if strings.Join(got, " ") != want {
		t.Errorf("backoff after 1..9 failures: %s, want %s", strings.Join(got, " "), want)
	}
}

func TestIsRunRef(t *testing.T) {
	for ref, want := range map[string]bool{
		"3f2a9c0d11e4:12": true, "db1:7": true, "db1:7@reads": true,
		"6f1d2c3b-4a5e-5f60-8a7b-9c0d1e2f3a4b": true,
		"12":                                   false, "latest": false, "latest:cache_sweep": false, ":12": false, "db1:0": false, "12@reads": false,
	} {
		if got := IsRunRef(ref); got != want {
			t.Errorf("IsRunRef(%q) = %v, want %v", ref, got, want)
		}
	}
}

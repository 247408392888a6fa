package testbin

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FerretDBVersion is the FerretDB that tests use as a MongoDB-compatible
// server wtd's own code did not write (a results store, say).
const FerretDBVersion = "v1.24.2"

var ferretdb binary

// FerretDB returns the path of a FerretDB (FerretDBVersion, SQLite backend
// only), built once per user from the module's source: downloaded through
// the Go module proxy, copied, its version file written (the module as
// published leaves it empty, and FerretDB refuses to start without it) and
// built with the tag ferretdb_no_postgresql. A build that fails skips the
// test with the reason, unless CI=true or WTD_TEST_FERRETDB=1, where it
// fails it. WTD_TEST_FERRETDB_BIN names a prebuilt one.
func FerretDB(t testing.TB) string {
	t.Helper()
	ferretdb.once.Do(func() {
		if p := os.Getenv("WTD_TEST_FERRETDB_BIN"); p != "" {
			ferretdb.path = p
			return
		}
		ferretdb.path, ferretdb.err = buildFerretDB()
	})
	if ferretdb.err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("WTD_TEST_FERRETDB") == "1" {
			t.Fatal(ferretdb.err)
		}
		t.Skipf("FerretDB could not be built (CI=true or WTD_TEST_FERRETDB=1 make this a failure): %v", ferretdb.err)
	}
	return ferretdb.path
}

// buildFerretDB builds FerretDB into the per-user build directory, where
// later test processes find it.
func buildFerretDB() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("wtd-testbin-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "ferretdb-"+FerretDBVersion)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	work, err := os.MkdirTemp(dir, "ferretdb-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	// Outside any module, so that this project's go.mod is not touched.
	goCmd := func(args ...string) *exec.Cmd {
		c := exec.Command("go", args...)
		c.Dir = work
		c.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on", "GOWORK=off")
		return c
	}
	dl, err := goCmd("mod", "download", "-json", "github.com/FerretDB/FerretDB@"+FerretDBVersion).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download FerretDB %s: %w", FerretDBVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(dl, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download FerretDB %s: %s %v", FerretDBVersion, mod.Error, err)
	}
	src := filepath.Join(work, "src")
	if b, err := exec.Command("cp", "-r", mod.Dir, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy FerretDB's source: %w: %s", err, b)
	}
	if b, err := exec.Command("chmod", "-R", "u+w", src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("chmod FerretDB's source: %w: %s", err, b)
	}
	if err := os.WriteFile(filepath.Join(src, "build", "version", "version.txt"), []byte(FerretDBVersion+"\n"), 0o644); err != nil {
		return "", err
	}
	tmp := out + fmt.Sprintf(".%d", os.Getpid())
	build := goCmd("build", "-tags", "ferretdb_no_postgresql", "-o", tmp, "./cmd/ferretdb")
	build.Dir = src
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build FerretDB %s: %w\n%s", FerretDBVersion, err, b)
	}
	return out, os.Rename(tmp, out)
}

// StartFerretDB starts FerretDB on a free loopback port with its SQLite
// backend in a fresh directory, waits until it accepts connections and
// returns its URI; it is killed when the test ends.
func StartFerretDB(t testing.TB) string {
	t.Helper()
	bin := FerretDB(t)
	var uri string
	err := OnFreePort(t, func(port int) error {
		data := t.TempDir()
		logf, err := os.Create(filepath.Join(t.TempDir(), "output"))
		if err != nil {
			return err
		}
		defer logf.Close()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(bin, "--handler=sqlite", "--sqlite-url=file:"+data+"/", "--listen-addr="+addr,
			"--telemetry=disable", "--log-level=warn", "--state-dir="+data, "--debug-addr=-")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start FerretDB: %w", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(30 * time.Millisecond) {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				b, _ := os.ReadFile(logf.Name())
				if containsFold(string(b), "address already in use") {
					return fmt.Errorf("%w: FerretDB on %s:\n%s", ErrPortInUse, addr, b)
				}
				return fmt.Errorf("FerretDB on %s exited before accepting connections:\n%s", addr, b)
			default:
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				<-exited
				return fmt.Errorf("FerretDB on %s: no connection within a minute", addr)
			}
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("FerretDB's output:\n%s", b)
			}
		})
		uri = "mongodb://" + addr + "/"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uri
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/internal/testbin"
)

// TestIdleConnectionsDoNotExhaustTheDaemon: a daemon limited to 200 open
// files, with 300 keep-alive connections held open that each sent one
// GET, still answers /healthz within 5 s, and a run its schedule fires
// afterwards is recorded ok.
func TestIdleConnectionsDoNotExhaustTheDaemon(t *testing.T) {
	const nofile, held = 200, 300
	wtd, mm := binaries(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "quick.lua"), []byte(quickPlaybook), 0o644)
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cfg := filepath.Join(dir, "wtd.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: %s
db: wtd.db
mongod: %s
sample_interval: 200ms
schedules:
  - name: quick
    cron: "@every 2s"
    playbook: quick.lua
`, listen, mm)), 0o644)
	// The shell sets the soft and hard limits, so that the Go runtime
	// cannot raise the soft one again.
	cmd := exec.Command("sh", "-c", `ulimit -n `+strconv.Itoa(nofile)+` && exec "$0" "$@"`, wtd, "daemon", "--config", cfg)
	cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+t.TempDir())
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, out, `"msg":"daemon start"`, 30*time.Second)
	limits, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid))
	if !regexp.MustCompile(fmt.Sprintf(`Max open files +%d +%d `, nofile, nofile)).Match(limits) {
		t.Fatalf("the daemon does not run with %d open files at most:\n%s", nofile, limits)
	}

	answered := holdIdleConns(t, listen, held)
	t.Logf("%d of %d held connections were answered", answered, held)
	since := time.Now()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get("http://" + listen + "/healthz"); err != nil {
		t.Errorf("GET /healthz with %d connections held: %v", held, err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET /healthz with %d connections held: %d", held, resp.StatusCode)
		}
		t.Logf("/healthz answered in %s", time.Since(since).Round(time.Millisecond))
	}

	db := filepath.Join(dir, "wtd.db")
	for deadline := time.Now().Add(90 * time.Second); !scheduledRunOK(db, since); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no run fired by the schedule after the connections were opened was recorded ok within 90 s:\n%s", out.String())
		}
	}
}

// holdIdleConns opens n connections to addr, each sending one keep-alive
// GET /healthz, reads their answers for up to 10 s and keeps the
// connections open until the test ends; it returns how many were
// answered.
func holdIdleConns(t *testing.T, addr string, n int) int {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", len(conns)+1, n, err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	}
	var answered atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(deadline)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	return int(answered.Load())
}

// scheduledRunOK reports whether db has a run fired by the schedule that
// started after since and ended ok.
func scheduledRunOK(db string, since time.Time) bool {
	st, err := store.OpenExisting(context.Background(), db)
	if err != nil {
		return false
	}
	defer st.Close(context.Background())
	runs, err := st.ListRuns(context.Background(), 0)
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.Trigger == "schedule quick" && r.StartedAt.After(since) && r.Status == store.StatusOK {
			return true
		}
	}
	return false
}

// Package testsvc is a stand-in for systemctl in wtd's tests: a shell
// script that starts, stops and restarts minimongod from a YAML config
// file, keeping its pid in a pid file, as a service manager does with
// mongod and /etc/mongod.conf. Tests import it from _test files only.
package testsvc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/testbin"
)

// Unit is the unit name the test manager serves.
const Unit = "testmongod"

// Service is minimongod run by the test service manager.
type Service struct {
	Dir     string
	Config  string   // the YAML config file
	Manager []string // the manager's command: {"/bin/sh", script}
	URI     string
	LogPath string // systemLog.path in the config
	PIDFile string
	// Original is the config file's content as written.
	Original []byte
}

// script is the manager: sh manager.sh start|stop|restart UNIT.
const script = `#!/bin/sh
# A stand-in for systemctl in wtd's tests: start|stop|restart UNIT.
BIN=%q
CONF=%q
PIDFILE=%q
OUT=%q
stop() {
  [ -f "$PIDFILE" ] || return 0
  pid=$(cat "$PIDFILE")
  kill "$pid" 2>/dev/null
  i=0
  while kill -0 "$pid" 2>/dev/null; do
    i=$((i+1))
    if [ $i -gt 300 ]; then kill -9 "$pid" 2>/dev/null; break; fi
    sleep 0.1
  done
  rm -f "$PIDFILE"
}
start() {
  "$BIN" -f "$CONF" >>"$OUT" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
}
case "$1" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  *) echo "usage: $0 start|stop|restart UNIT" >&2; exit 2 ;;
esac
`

// ConfigText is the config the service starts with: comments, keys wtd
// does not change, and a cacheSizeGB of cacheGB.
func ConfigText(dir string, port int, cacheGB string) string {
	return fmt.Sprintf(`# mongod.conf of wtd's tests, a stand-in for /etc/mongod.conf

# where to write logging data.
systemLog:
  destination: file
  logAppend: true
  path: %s

# Where and how to store data.
storage:
  dbPath: %s
  wiredTiger:
    engineConfig:
      cacheSizeGB: %s # the operator's choice

# network interfaces
net:
  port: %d
  bindIp: 127.0.0.1 # loopback only

setParameter:
  ttlMonitorSleepSecs: 60
`, filepath.Join(dir, "mongod.log"), filepath.Join(dir, "db"), cacheGB, port)
}

// Start writes the config (cacheSizeGB 0.5), the manager script, starts
// minimongod (bin) through it and waits until it answers. The service is
// stopped when the test ends.
func Start(t testing.TB, bin string) *Service {
	t.Helper()
	dir := t.TempDir()
	port := testbin.FreePort(t)
	s := &Service{Dir: dir, Config: filepath.Join(dir, "mongod.conf"), LogPath: filepath.Join(dir, "mongod.log"),
		PIDFile: filepath.Join(dir, "mongod.pid"), URI: "mongodb://127.0.0.1:" + strconv.Itoa(port)}
	s.Original = []byte(ConfigText(dir, port, "0.5"))
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Config, s.Original, 0o640); err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "manager.sh")
	if err := os.WriteFile(sh, []byte(fmt.Sprintf(script, bin, s.Config, s.PIDFile, filepath.Join(dir, "stdout.log"))), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Manager = []string{"/bin/sh", sh}
	t.Cleanup(func() { s.run("stop") })
	if err := s.run("start"); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(60 * time.Second); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, s.Log())
	}
	return s
}

func (s *Service) run(verb string) error {
	out, err := exec.Command(s.Manager[0], s.Manager[1], verb, Unit).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", s.Manager[1], verb, err, out)
	}
	return nil
}

// Log returns the server's log file.
func (s *Service) Log() string {
	b, _ := os.ReadFile(s.LogPath)
	return string(b)
}

// Wait waits until the server answers a ping, for at most d.
func (s *Service) Wait(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if _, err := s.Status(); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("service at %s did not answer within %s: %v", s.URI, d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Status returns serverStatus.
func (s *Service) Status() (bson.Raw, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(s.URI + "/?directConnection=true&serverSelectionTimeoutMS=2000"))
	if err != nil {
		return nil, err
	}
	defer c.Disconnect(context.Background())
	return c.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
}

// CacheBytes is the cache size in force (serverStatus wiredTiger.cache
// "maximum bytes configured").
func (s *Service) CacheBytes(t testing.TB) float64 {
	t.Helper()
	raw, err := s.Status()
	if err != nil {
		t.Fatalf("serverStatus: %v", err)
	}
	v, err := raw.LookupErr("wiredTiger", "cache", "maximum bytes configured")
	if err != nil {
		t.Fatalf("no cache size in serverStatus: %v", err)
	}
	f, ok := v.AsFloat64OK()
	if !ok {
		n, _ := v.AsInt64OK()
		f = float64(n)
	}
	return f
}

// Parameter returns getParameter name.
func (s *Service) Parameter(t testing.TB, name string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(s.URI + "/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	raw, err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Raw()
	if err != nil {
		t.Fatalf("getParameter %s: %v", name, err)
	}
	var out bson.M
	bson.Unmarshal(raw, &out)
	return out[name]
}

// ConfigNow returns the config file's content.
func (s *Service) ConfigNow(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// GB is a cacheSizeGB in bytes as WiredTiger is given it (MB granularity).
func GB(g float64) float64 { return float64(int64(g*1024)) * 1024 * 1024 }

// ManagerArg is the manager as a Lua list literal: {"/bin/sh", "..."}.
func (s *Service) ManagerArg() string {
	q := make([]string, len(s.Manager))
	for i, m := range s.Manager {
		q[i] = strconv.Quote(m)
	}
	return "{" + strings.Join(q, ", ") + "}"
}

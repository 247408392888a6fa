package itest

import (
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// rssBytes returns the resident set size of process pid.
func rssBytes(t testing.TB, pid int) int64 { return procStatusBytes(t, pid, "VmRSS") }

// peakRSSBytes returns the largest resident set size process pid has had.
func peakRSSBytes(t testing.TB, pid int) int64 { return procStatusBytes(t, pid, "VmHWM") }

// procStatusBytes reads a size in kB from /proc/PID/status (VmRSS, VmHWM).
func procStatusBytes(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb := must(strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64))(t)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// declareLargeMessages opens n connections that each announce a 48 MB
// message and send the first bytes of its header only.
func declareLargeMessages(t testing.TB, s *server, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port))
		if err != nil {
			t.Fatal(err)
		}
		var hdr [8]byte
		binary.LittleEndian.PutUint32(hdr[:], 48000000)
		if _, err := c.Write(hdr[:]); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	return conns
}

// idleRound opens n connections that each declare a 48 MB message, waits,
// checks the server answers, measures its RSS and closes them.
func idleRound(t testing.TB, s *server, n int, wait time.Duration) int64 {
	t.Helper()
	conns := declareLargeMessages(t, s, n)
	time.Sleep(wait)
	s.run(t, "admin", bson.D{{Key: "ping", Value: 1}})
	rss := rssBytes(t, s.cmd.Process.Pid)
	for _, c := range conns {
		noErr(t, c.Close())
	}
	return rss
}

// Connections that announce a large message and send nothing cost no more
// than their bytes received: memory is allocated as bytes arrive.
func TestIdleLargeMessagesCostLittleMemory(t *testing.T) {
	s := start(t, "--wiredTigerCacheSizeGB", "0.25")
	pid := s.cmd.Process.Pid
	s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})
	before := rssBytes(t, pid)
	// Rounds of connections, so that freed buffers are reused (and so
	// zeroed, which makes their pages resident).
	var peak int64
	for round := 0; round < 4; round++ {
		peak = max(peak, idleRound(t, s, 30, 300*time.Millisecond))
	}
	if grew := peak - before; grew > 200<<20 { // each round used to take 1.4 GB
		t.Errorf("rounds of 30 idle connections declaring 48 MB each grew RSS by %d MB", grew>>20)
	}
}

// net.maxIncomingConnections caps the open connections as in mongod: the
// ones over the cap are closed at once, and a slot frees when a
// connection ends.
func TestMaxIncomingConnections(t *testing.T) {
	t.Parallel()
	s := start(t, "--maxConns", "8")
	ss := s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})
	open := int(num(ss, "connections.current"))
	conns := declareLargeMessages(t, s, 8-open)
	extra := declareLargeMessages(t, s, 1)[0]
	noErr(t, extra.SetReadDeadline(time.Now().Add(5*time.Second)))
	if _, err := extra.Read(make([]byte, 1)); err == nil {
		t.Errorf("connection over the cap was not closed")
	}
	if !s.waitLog("Connection refused because there are too many open connections") {
		t.Errorf("no log line for the refused connection")
	}
	for _, c := range conns {
		noErr(t, c.Close())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ss = s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})
		if num(ss, "connections.current") == int64(open) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if num(ss, "connections.rejected") < 1 || num(ss, "connections.available") != int64(8-open) {
		t.Errorf("connections = %v", ss["connections"])
	}
}

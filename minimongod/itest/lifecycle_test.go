package itest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"wtd/internal/testbin"
	"wtd/minimongod/wire"
)

func TestRestartPersistence(t *testing.T) {
	t.Parallel()
	dbpath := t.TempDir()
	s := startAt(t, dbpath)
	c := s.db("keep").Collection("c")
	for i := 0; i < 500; i++ {
		must(c.InsertOne(ctx, bson.M{"_id": i, "k": i % 10}))(t)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongoIndex("k")); err != nil {
		t.Fatal(err)
	}
	noErr(t, s.db("keep").CreateCollection(ctx, "empty"))
	s.stop()
	if b := must(os.ReadFile(filepath.Join(dbpath, "mongod.lock")))(t); len(b) != 0 {
		t.Errorf("lock file after clean shutdown holds %q", b)
	}

	s2 := startAt(t, dbpath)
	c2 := s2.db("keep").Collection("c")
	if n, err := c2.CountDocuments(ctx, bson.M{}); err != nil || n != 500 {
		t.Fatalf("after restart: %d documents, %v", n, err)
	}
	if n := must(c2.CountDocuments(ctx, bson.M{"k": 3}))(t); n != 50 {
		t.Errorf("k=3 through the index after restart: %d", n)
	}
	specs := must(c2.Indexes().ListSpecifications(ctx))(t)
	if len(specs) != 2 {
		t.Errorf("indexes after restart: %v", specs)
	}
	names := must(s2.db("keep").ListCollectionNames(ctx, bson.M{}))(t)
	if len(names) != 2 {
		t.Errorf("collections after restart: %v", names)
	}
	cs := s2.run(t, "keep", bson.D{{Key: "collStats", Value: "c"}})
	if cs["count"] != int64(500) {
		t.Errorf("collStats.count after restart = %v", cs["count"])
	}
}

func mongoIndex(field string) mongoIndexModel {
	return mongoIndexModel{Keys: bson.D{{Key: field, Value: 1}}}
}

func TestKillRecovery(t *testing.T) {
	dbpath := t.TempDir()
	s := startAt(t, dbpath)
	c := s.db("crash").Collection("c")
	// Journaled writes survive for sure; default writes after a journal flush.
	jc := c.Database().Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
	for i := 0; i < 200; i++ {
		if _, err := jc.InsertOne(ctx, bson.M{"_id": i, "j": true}); err != nil {
			t.Fatal(err)
		}
	}
	var docs []any
	for i := 200; i < 5200; i++ {
		docs = append(docs, bson.M{"_id": i})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	waitJournalFlushed(t, s) // every journalCommitInterval (100 ms)
	noErr(t, s.cmd.Process.Signal(syscall.SIGKILL))
	<-s.done

	s2 := startAt(t, dbpath)
	n, err := s2.db("crash").Collection("c").CountDocuments(ctx, bson.M{})
	if err != nil || n != 5200 {
		t.Fatalf("after kill -9: %d documents (%v), want 5200", n, err)
	}
	if !s2.waitLog("Detected unclean shutdown") {
		t.Errorf("restart after kill -9 did not log an unclean shutdown")
	}
	cs := s2.run(t, "crash", bson.D{{Key: "collStats", Value: "c"}})
	if cs["count"] != int64(5200) {
		t.Errorf("collStats.count after recovery = %v", cs["count"])
	}
}

func TestLockedDBPath(t *testing.T) {
	t.Parallel()
	s := start(t)
	cmd := exec.Command(mmBinary, "--port", strconv.Itoa(testbin.FreePort(t)), "--dbpath", s.dbpath)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("second server on a locked dbpath started:\n%s", out)
	}
	if code := cmd.ProcessState.ExitCode(); code != 100 {
		t.Errorf("exit code %d, want 100", code)
	}
	if !bytes.Contains(out, []byte("Unable to lock the lock file")) || !bytes.Contains(out, []byte("Another mongod instance is already running")) {
		t.Errorf("output:\n%s", out)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--no-such-flag"}, 2, "unrecognised option '--no-such-flag'"},
		{[]string{"--port"}, 2, "the required argument for option '--port' is missing"},
		{[]string{"--wiredTigerCacheSizeGB", "0.1", "--dbpath", dir}, 1, "cacheSizeGB must be greater than or equal to 0.25"},
		{[]string{"--wiredTigerCacheSizeGB", "20000", "--dbpath", dir}, 1, "cacheSizeGB must be less than or equal to 10000"},
		{[]string{"--port", "70000", "--dbpath", dir}, 1, "net.port must be less than or equal to 65535"},
		{[]string{"--dbpath", filepath.Join(dir, "missing")}, 100, "Data directory " + filepath.Join(dir, "missing") + " not found"},
		{[]string{"--dbpath", dir, "--setParameter", "noSuchParameter=1", "--port", "0"}, 2, `Illegal --setParameter parameter: "noSuchParameter"`},
	} {
		cmd := exec.Command(mmBinary, tc.args...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if code := cmd.ProcessState.ExitCode(); code != tc.code || !bytes.Contains(out, []byte(tc.want)) {
			t.Errorf("%v: exit %d, want %d with %q; output:\n%s", tc.args, code, tc.code, tc.want, out)
		}
	}
	out, err := exec.Command(mmBinary, "--version").Output()
	if err != nil || !bytes.HasPrefix(out, []byte("db version v4.4.")) {
		t.Errorf("--version: %q %v", out, err)
	}
	out, err = exec.Command(mmBinary, "--help").Output()
	if err != nil || !bytes.Contains(out, []byte("--wiredTigerCacheSizeGB")) {
		t.Errorf("--help: %v\n%s", err, out)
	}
}

func TestConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := testbin.FreePort(t)
	cfg := filepath.Join(dir, "mongod.conf")
	logPath := filepath.Join(dir, "mongod.log")
	noErr(t, os.WriteFile(cfg, []byte("net:\n  port: "+strconv.Itoa(port)+"\n  bindIp: 127.0.0.1\nstorage:\n  dbPath: "+dir+"\n  wiredTiger:\n    engineConfig:\n      cacheSizeGB: 0.3\nsystemLog:\n  destination: file\n  path: "+logPath+"\nsetParameter:\n  journalCommitInterval: 20\n"), 0o644))
	s := &server{t: t, port: port, dbpath: dir, log: newServerLog(t), done: make(chan struct{})}
	s.cmd = exec.Command(mmBinary, "-f", cfg)
	s.cmd.Stdout, s.cmd.Stderr = s.log.f, s.log.f
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.kill)
	s.client = s.connect()
	ss := s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})
	if max := ss["wiredTiger"].(bson.M)["cache"].(bson.M)["maximum bytes configured"]; max != int64(307<<20) {
		t.Errorf("cache from config file = %v, want %d", max, 307<<20)
	}
	gp := s.run(t, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "journalCommitInterval", Value: 1}})
	if gp["journalCommitInterval"] != int32(20) {
		t.Errorf("journalCommitInterval from config = %v", gp)
	}
	s.stop()
	logText := must(os.ReadFile(logPath))(t)
	for _, want := range []string{`"msg":"Waiting for connections"`, `"msg":"Opening WiredTiger"`, "cache_size=307M", "session_max=33000", "statistics=(fast)", "log=(enabled=true,archive=true,path=journal,compressor=snappy)"} {
		if !bytes.Contains(logText, []byte(want)) {
			t.Errorf("log has no %s", want)
		}
	}
}

func TestShutdownCommand(t *testing.T) {
	t.Parallel()
	s := start(t)
	must(s.db("x").Collection("c").InsertOne(ctx, bson.M{"a": 1}))(t)
	// mongod closes the connection instead of replying.
	s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "shutdown", Value: 1}})
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown command did not stop the server")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code after shutdown = %d\n%s", code, s.log)
	}
	if !strings.Contains(s.log.String(), "WiredTiger closed") {
		t.Errorf("no clean WiredTiger close in the log")
	}
}

// rawConn sends hand-made wire messages.
func rawConn(t *testing.T, s *server) net.Conn {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { noErr(t, c.Close()) })
	noErr(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c
}

func readReply(t *testing.T, c net.Conn) (*wire.Message, []byte, error) {
	var hdr [4]byte
	if _, err := c.Read(hdr[:]); err != nil {
		return nil, nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	buf := make([]byte, n)
	copy(buf, hdr[:])
	for got := 4; got < n; {
		k, err := c.Read(buf[got:])
		if err != nil {
			return nil, nil, err
		}
		got += k
	}
	return nil, buf, nil
}

func TestLegacyHandshakeAndMalformedMessages(t *testing.T) {
	t.Parallel()
	s := start(t)
	// OP_QUERY isMaster gets an OP_REPLY.
	c := rawConn(t, s)
	q := must(bson.Marshal(bson.D{{Key: "isMaster", Value: 1}}))(t)
	must(c.Write(wire.AppendQuery(nil, 7, 0, "admin.$cmd", 0, -1, q)))(t)
	_, buf, err := readReply(t, c)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wire.DecodeReply(buf)
	if err != nil || rep.Header.ResponseTo != 7 || len(rep.Documents) != 1 {
		t.Fatalf("OP_REPLY: %v %v", rep, err)
	}
	if v := must(rep.Documents[0].LookupErr("ismaster"))(t); !v.Boolean() {
		t.Errorf("isMaster reply = %v", rep.Documents[0])
	}
	// An oversized length closes the connection; the server lives on.
	c2 := rawConn(t, s)
	var big [16]byte
	binary.LittleEndian.PutUint32(big[:], 100<<20)
	must(c2.Write(big[:]))(t)
	if _, _, err := readReply(t, c2); err == nil {
		t.Error("oversized message got a reply")
	}
	// Garbage inside a well-framed OP_MSG.
	c3 := rawConn(t, s)
	msg := make([]byte, 40)
	binary.LittleEndian.PutUint32(msg[0:], 40)
	binary.LittleEndian.PutUint32(msg[12:], uint32(wire.OpMsg))
	for i := 20; i < 40; i++ {
		msg[i] = 0xEE
	}
	must(c3.Write(msg))(t)
	if _, _, err := readReply(t, c3); err == nil {
		t.Error("an OP_MSG with a malformed body got a reply; want the connection closed")
	}
	// moreToCome: an unacknowledged insert gets no reply but is done.
	c4 := rawConn(t, s)
	body := must(bson.Marshal(bson.D{{Key: "insert", Value: "unack"}, {Key: "documents", Value: bson.A{bson.M{"_id": 1}}}, {Key: "$db", Value: "test"}}))(t)
	must(c4.Write(wire.AppendMsg(nil, 1, 0, wire.MoreToCome, body)))(t)
	ping := must(bson.Marshal(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}))(t)
	must(c4.Write(wire.AppendMsg(nil, 2, 0, 0, ping)))(t)
	_, buf, err = readReply(t, c4)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wire.Decode(buf)
	if err != nil || m.Header.ResponseTo != 2 {
		t.Fatalf("reply to the ping after an unacknowledged insert: %v %v", m, err)
	}
	if n := must(s.db("test").Collection("unack").CountDocuments(ctx, bson.M{}))(t); n != 1 {
		t.Errorf("unacknowledged insert: %d documents", n)
	}
	// The server still serves.
	s.run(t, "admin", bson.D{{Key: "ping", Value: 1}})
}

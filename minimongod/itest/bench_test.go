package itest

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/internal/testbin"
	"wtd/minimongod/keyenc"
	mmoptions "wtd/minimongod/options"
	"wtd/minimongod/wire"
	"wtd/minimongod/wt"
)

// The wire path (Go driver -> minimongod) beside the same operations
// straight on WiredTiger through the binding, in one run:
//
//	go test ./minimongod/itest -run '^$' -bench . -benchtime 2s
//
// Wire benchmarks talk to minimongod directly, not through the reply
// checker the tests use, and report the server's CPU per operation, read
// from its process CPU clock (nanoseconds, every thread, exited ones too).
// With -mmprofile DIR each wire benchmark also writes minimongod's CPU and
// allocation profiles of mmprofilesecs seconds of its workload to DIR:
//
//	go test ./minimongod/itest -run '^$' -bench PointRead/wire -mmprofile /tmp/prof
//	go tool pprof -top /tmp/prof/BenchmarkPointRead_wire.cpu.pprof
const benchDocBytes = 1000

var (
	mmProfile     = flag.String("mmprofile", "", "write minimongod's CPU and allocation profiles of each wire benchmark to this directory")
	mmProfileSecs = flag.Int("mmprofilesecs", 5, "seconds of workload each -mmprofile profile covers")
)

// idOffset is where benchDoc's int32 _id value starts: length, type byte,
// "_id\x00".
const idOffset = 4 + 1 + 4

func benchDoc(r *rand.ChaCha8, id int) []byte {
	pad := make([]byte, benchDocBytes-30)
	r.Read(pad)
	b, err := bson.Marshal(bson.D{{Key: "_id", Value: id}, {Key: "pad", Value: pad}})
	if err != nil {
		panic(err)
	}
	return b
}

// benchServer is a minimongod for benchmarks: a direct client (no reply
// checker in between) and, with -mmprofile, its --pprof address.
type benchServer struct {
	*server
	direct *mongo.Client
	pprof  string
}

// startBench starts minimongod with a 1 GB cache for a benchmark.
func startBench(b *testing.B) *benchServer {
	args := []string{"--wiredTigerCacheSizeGB", "1"}
	pprof := ""
	if *mmProfile != "" {
		pprof = fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(b))
		args = append(args, "--pprof", pprof)
	}
	s := start(b, args...)
	c, err := mongo.Connect(options.Client().ApplyURI(fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", s.mmPort)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.Disconnect(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return &benchServer{server: s, direct: c, pprof: pprof}
}

func (s *benchServer) coll(db, name string) *mongo.Collection {
	return s.direct.Database(db).Collection(name)
}

// cpuTime returns the CPU time the server process has used.
func (s *server) cpuTime(b testing.TB) time.Duration { return processCPU(b, s.cmd.Process.Pid) }

// processCPU returns the CPU time process pid has used, every thread
// included, exited ones too (its CPUCLOCK_SCHED process clock:
// nanoseconds, not ticks).
func processCPU(b testing.TB, pid int) time.Duration {
	b.Helper()
	clock := int32((^pid)<<3 | 2) // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		b.Fatalf("clock_gettime of process %d's CPU clock: %v", pid, e)
	}
	return time.Duration(ts.Nano())
}

// startFloor builds and starts floord, or cfloord (see their package
// comments), for the benchmark and returns its process and a client
// connected to it.
func startFloor(b *testing.B, name string, args ...string) (*exec.Cmd, *mongo.Client) {
	bin := filepath.Join(b.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "wtd/minimongod/itest/"+name).CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", name, err, out)
	}
	port := testbin.FreePort(b)
	cmd := exec.Command(bin, append([]string{"-port", strconv.Itoa(port)}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := cmd.Process.Kill(); err != nil {
			b.Error(err)
		}
		var exit *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			b.Errorf("floord ended with %v, want killed", err)
		}
	})
	c, err := mongo.Connect(options.Client().ApplyURI(fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", port)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.Disconnect(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return cmd, c
}

// cpuMeter measures the server CPU a benchmark's timed loop uses.
type cpuMeter struct {
	s    *benchServer
	cpu0 time.Duration
	prof *profileRun
}

// measure resets the benchmark timer and starts measuring; done reports
// server CPU per operation in µs, then (with -mmprofile) keeps running op
// until the profiles are written.
func (s *benchServer) measure(b *testing.B) *cpuMeter {
	b.ResetTimer()
	m := &cpuMeter{s: s, cpu0: s.cpuTime(b)}
	m.prof = s.startProfiles(b)
	return m
}

func (m *cpuMeter) done(b *testing.B, op func()) {
	cpu := m.s.cpuTime(b) - m.cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(b.N), "server_cpu_us/op")
	m.prof.finish(b, op)
}

// profileRun is one benchmark's pair of profile downloads.
type profileRun struct {
	done chan error
}

// startProfiles starts fetching minimongod's CPU profile and allocation
// delta profile over the next mmprofilesecs seconds (nil without
// -mmprofile, and in the testing package's first run of one iteration).
func (s *benchServer) startProfiles(b *testing.B) *profileRun {
	if s.pprof == "" || b.N == 1 {
		return nil
	}
	if err := os.MkdirAll(*mmProfile, 0o755); err != nil {
		b.Fatal(err)
	}
	base := filepath.Join(*mmProfile, strings.NewReplacer("/", "_", " ", "_").Replace(b.Name()))
	p := &profileRun{done: make(chan error, 2)}
	for _, kind := range []string{"profile", "allocs"} {
		url := fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", s.pprof, kind, *mmProfileSecs)
		file := base + map[string]string{"profile": ".cpu.pprof", "allocs": ".allocs.pprof"}[kind]
		go func() { p.done <- download(url, file) }()
	}
	return p
}

func download(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// finish keeps the workload going (op, untimed) until both profiles are
// written, so they cover the workload and nothing else.
func (p *profileRun) finish(b *testing.B, op func()) {
	if p == nil {
		return
	}
	for pending := 2; pending > 0; {
		select {
		case err := <-p.done:
			if err != nil {
				b.Fatal(err)
			}
			pending--
		default:
			op()
		}
	}
}

// rawEngine opens WiredTiger with minimongod's own open string.
func rawEngine(b *testing.B) (*wt.Conn, *wt.Session) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		b.Fatal(err)
	}
	opts, err := mmoptions.Parse([]string{"--dbpath", dir, "--wiredTigerCacheSizeGB", "1"}, 0)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := wt.Open(dir, opts.WiredTigerOpenConfig(0, "/usr/lib/x86_64-linux-gnu/libwiredtiger_snappy.so"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := conn.Close(""); err != nil {
			b.Error(err)
		}
	})
	s, err := conn.OpenSession("")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Create("table:c", "key_format=u,value_format=u,"+opts.CollectionConfig()); err != nil {
		b.Fatal(err)
	}
	return conn, s
}

func rawKey(id int) []byte {
	return keyenc.Append(nil, bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, int32(id))})
}

// opmsgInserter sends a batch as one prepared OP_MSG insert with a
// document sequence on a connection of its own, the _ids patched in place:
// a client that costs next to nothing, so that the time is the transfer's
// and the server's.
type opmsgInserter struct {
	conn  net.Conn
	msg   []byte
	idAt  []int // offset of each document's int32 _id in msg
	reply []byte
}

func newOpmsgInserter(b *testing.B, port int, docs [][]byte) *opmsgInserter {
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := conn.Close(); err != nil {
			b.Error(err)
		}
	})
	body, err := bson.Marshal(bson.D{{Key: "insert", Value: "c"}, {Key: "ordered", Value: true}, {Key: "$db", Value: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	raws := make([]bson.Raw, len(docs))
	for j, d := range docs {
		raws[j] = d
	}
	o := &opmsgInserter{conn: conn, msg: wire.AppendMsgSequences(nil, 1, 0, 0, body, wire.Sequence{Identifier: "documents", Docs: raws})}
	// The documents end the message, back to back.
	at := len(o.msg)
	for j := len(docs) - 1; j >= 0; j-- {
		at -= len(docs[j])
		o.idAt = append([]int{at + idOffset}, o.idAt...)
	}
	return o
}

// insert sends the batch with _ids base, base+1, ... and checks that the
// reply counts every document.
func (o *opmsgInserter) insert(b *testing.B, base int) {
	for j, at := range o.idAt {
		binary.LittleEndian.PutUint32(o.msg[at:], uint32(base+j))
	}
	if _, err := o.conn.Write(o.msg); err != nil {
		b.Fatal(err)
	}
	o.reply = append(o.reply[:0], 0, 0, 0, 0)
	if _, err := io.ReadFull(o.conn, o.reply); err != nil {
		b.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(o.reply))
	o.reply = slices.Grow(o.reply, n)[:n]
	if _, err := io.ReadFull(o.conn, o.reply[4:]); err != nil {
		b.Fatal(err)
	}
	m, err := wire.Decode(o.reply)
	if err != nil {
		b.Fatal(err)
	}
	if got, ok := bsoncore.Document(m.Body).Lookup("n").AsInt64OK(); !ok || got != int64(len(o.idAt)) {
		b.Fatalf("insert reply %v", m.Body)
	}
}

// BenchmarkInsertBatch1000x1KB inserts batches of 1000 1 KB documents over
// the wire (InsertMany; one insert command through RunCommand; a prepared
// OP_MSG sent on a plain socket, wire-opmsg), to floord (which stores
// nothing: the client's and the transfer's share) and straight on
// WiredTiger in one transaction per batch (raw). "alternating" runs a
// wire, a wire-opmsg and a raw batch by turns and reports the ratios of
// their MB/s to raw's, medians over the rounds with their quartiles: on a
// shared machine the load changes between sub-benchmarks, but hardly
// within a round. Servers and tables live as long as the parent benchmark (top), so
// the testing package's several runs of a sub-benchmark share them.
func BenchmarkInsertBatch1000x1KB(top *testing.B) {
	r := rand.NewChaCha8([32]byte{2})
	// One batch of documents, reused with fresh _ids patched in place, so
	// the client's own allocations do not weigh on either side.
	docs := make([][]byte, 1000)
	for j := range docs {
		docs[j] = benchDoc(r, j)
	}
	// next is the first _id of the next batch, across every run of a
	// sub-benchmark (each keeps its server or table).
	next := 0
	setIDs := func() int {
		base := next
		for j, d := range docs {
			binary.LittleEndian.PutUint32(d[idOffset:], uint32(base+j))
		}
		next += len(docs)
		return base
	}
	batch := make([]any, len(docs))
	for j := range docs {
		batch[j] = bson.Raw(docs[j])
	}
	var wireSrv *benchServer
	wireInsert := func(b *testing.B) {
		if wireSrv == nil {
			wireSrv = startBench(top)
		}
		setIDs()
		if _, err := wireSrv.coll("bench", "c").InsertMany(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	var rawSess *wt.Session
	var rawCur *wt.Cursor
	rawInsert := func(b *testing.B) {
		if rawSess == nil {
			_, rawSess = rawEngine(top)
			var err error
			if rawCur, err = rawSess.Cursor("table:c", false); err != nil {
				b.Fatal(err)
			}
		}
		base := setIDs()
		if err := rawSess.Begin(); err != nil {
			b.Fatal(err)
		}
		for j, d := range docs {
			if err := rawCur.Insert(rawKey(base+j), d); err != nil {
				b.Fatal(err)
			}
		}
		if err := rawSess.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	top.Run("wire", func(b *testing.B) {
		wireInsert(b) // starts the server before the timer
		b.SetBytes(1000 * benchDocBytes)
		m := wireSrv.measure(b)
		for i := 0; i < b.N; i++ {
			wireInsert(b)
		}
		m.done(b, func() { wireInsert(b) })
	})
	// The same batch as one insert command through the driver's
	// RunCommand: no per-document _id check and re-marshal on the client.
	var command *benchServer
	top.Run("wire-command", func(b *testing.B) {
		if command == nil {
			command = startBench(top)
		}
		raws := make(bson.A, len(docs))
		for j := range docs {
			raws[j] = bson.Raw(docs[j])
		}
		cmd := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: raws}}
		insert := func() {
			setIDs()
			var res struct {
				N int `bson:"n"`
			}
			if err := command.direct.Database("bench").RunCommand(ctx, cmd).Decode(&res); err != nil || res.N != len(docs) {
				b.Fatalf("insert: %v, n=%d", err, res.N)
			}
		}
		b.SetBytes(1000 * benchDocBytes)
		m := command.measure(b)
		for i := 0; i < b.N; i++ {
			insert()
		}
		m.done(b, insert)
	})
	top.Run("raw", func(b *testing.B) {
		rawInsert(b) // opens the table before the timer
		b.SetBytes(1000 * benchDocBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			rawInsert(b)
		}
	})
	// The same batches to floord, which stores nothing: what the client
	// and the transfer cost.
	var floorColl *mongo.Collection
	var floorCmd *exec.Cmd
	top.Run("floor", func(b *testing.B) {
		if floorColl == nil {
			var c *mongo.Client
			floorCmd, c = startFloor(top, "floord")
			floorColl = c.Database("bench").Collection("c")
		}
		insert := func() {
			setIDs()
			if res, err := floorColl.InsertMany(ctx, batch); err != nil || len(res.InsertedIDs) != len(docs) {
				b.Fatalf("insert: %v", err)
			}
		}
		insert()
		b.SetBytes(1000 * benchDocBytes)
		b.ResetTimer()
		cpu0 := processCPU(b, floorCmd.Process.Pid)
		for i := 0; i < b.N; i++ {
			insert()
		}
		cpu := processCPU(b, floorCmd.Process.Pid) - cpu0
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server_cpu_us/op")
	})
	var opmsg *opmsgInserter
	opmsgInsert := func(b *testing.B) {
		if opmsg == nil {
			wireInsert(b) // the server and its collection
			opmsg = newOpmsgInserter(top, wireSrv.mmPort, docs)
		}
		opmsg.insert(b, setIDs())
	}
	top.Run("wire-opmsg", func(b *testing.B) {
		opmsgInsert(b)
		b.SetBytes(1000 * benchDocBytes)
		m := wireSrv.measure(b)
		for i := 0; i < b.N; i++ {
			opmsgInsert(b)
		}
		m.done(b, func() { opmsgInsert(b) })
	})
	top.Run("alternating", func(b *testing.B) {
		wireInsert(b)
		opmsgInsert(b)
		rawInsert(b)
		var wireRatios, opmsgRatios []float64
		b.SetBytes(3 * 1000 * benchDocBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			wireInsert(b)
			t1 := time.Now()
			opmsgInsert(b)
			t2 := time.Now()
			rawInsert(b)
			raw := float64(time.Since(t2))
			wireRatios = append(wireRatios, raw/float64(t1.Sub(t0)))
			opmsgRatios = append(opmsgRatios, raw/float64(t2.Sub(t1)))
		}
		b.StopTimer()
		reportQuartiles(b, "wire_vs_raw", wireRatios)
		reportQuartiles(b, "opmsg_vs_raw", opmsgRatios)
	})
}

// reportQuartiles reports the median of x as name, and its quartiles.
func reportQuartiles(b *testing.B, name string, x []float64) {
	slices.Sort(x)
	b.ReportMetric(x[len(x)/2], name)
	b.ReportMetric(x[len(x)/4], name+"_p25")
	b.ReportMetric(x[len(x)*3/4], name+"_p75")
}

// BenchmarkPointRead reads one document by _id, from cache, in a
// collection of 50,000 1 KB documents: over the wire from one client
// thread (ns/op is the end-to-end latency), from four client threads
// (ops/s), and straight on WiredTiger.
func BenchmarkPointRead(top *testing.B) {
	const n = 50_000
	r := rand.NewChaCha8([32]byte{3})
	var s *benchServer
	load := func(b *testing.B) *benchServer {
		if s != nil {
			return s
		}
		s = startBench(top)
		c := s.coll("bench", "c")
		for i := 0; i < n; i += 1000 {
			docs := make([]any, 1000)
			for j := range docs {
				docs[j] = bson.Raw(benchDoc(r, i+j))
			}
			if _, err := c.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
		}
		return s
	}
	read := func(c *mongo.Collection, pick *rand.Rand) error {
		var out bson.Raw
		return c.FindOne(ctx, bson.D{{Key: "_id", Value: pick.IntN(n)}}).Decode(&out)
	}
	mustRead := func(b *testing.B, c *mongo.Collection, pick *rand.Rand) {
		if err := read(c, pick); err != nil {
			b.Fatal(err)
		}
	}
	top.Run("wire", func(b *testing.B) {
		s := load(b)
		c := s.coll("bench", "c")
		pick := rand.New(rand.NewPCG(1, 1))
		m := s.measure(b)
		for i := 0; i < b.N; i++ {
			mustRead(b, c, pick)
		}
		m.done(b, func() { mustRead(b, c, pick) })
	})
	top.Run("wire-4threads", func(b *testing.B) {
		const threads = 4
		s := load(b)
		c := s.coll("bench", "c")
		picks := make([]*rand.Rand, threads)
		for t := range picks {
			picks[t] = rand.New(rand.NewPCG(uint64(t)+1, 2))
		}
		m := s.measure(b)
		start := time.Now()
		var wg sync.WaitGroup
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := t; i < b.N; i += threads {
					if err := read(c, picks[t]); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		m.done(b, func() { mustRead(b, c, picks[0]) })
	})
	// The same reads from floord: what the network and the Go runtime
	// cost a server at this pace, for nothing; from floord spending 10 µs
	// of CPU on each: what that work costs beyond itself; from cfloord,
	// floord in C with a blocking thread per connection: what the
	// machine's network and wake-ups cost any server; and from cfloord
	// reading each document from WiredTiger: a server in C doing a point
	// read's engine work and nothing else.
	type floorServer struct {
		cmd  *exec.Cmd
		coll *mongo.Collection
	}
	floors := map[string]*floorServer{}
	floor := func(bench, cmd string, args ...string) *floorServer {
		if f := floors[bench]; f != nil {
			return f
		}
		p, client := startFloor(top, cmd, args...)
		f := &floorServer{cmd: p, coll: client.Database("bench").Collection("c")}
		mustRead(top, f.coll, rand.New(rand.NewPCG(1, 1))) // the connection's handshake
		floors[bench] = f
		return f
	}
	for _, f := range []struct {
		bench, cmd string
		args       []string
		wt         bool // cfloord -wt: a table of n documents
	}{{"floor", "floord", nil, false}, {"floor-work10us", "floord", []string{"-work", "10us"}, false},
		{"floor-c", "cfloord", nil, false}, {"floor-c-wt", "cfloord", nil, true}} {
		top.Run(f.bench, func(b *testing.B) {
			args := f.args
			if f.wt && floors[f.bench] == nil {
				// top's directory outlives the server, which top stops.
				args = []string{"-wt", top.TempDir(), "-docs", strconv.Itoa(n)}
			}
			fs := floor(f.bench, f.cmd, args...)
			if f.wt {
				var got struct {
					ID int `bson:"_id"`
				}
				if err := fs.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 4321}}).Decode(&got); err != nil || got.ID != 4321 {
					b.Fatalf("cfloord -wt answered {_id: 4321} with _id %d (%v)", got.ID, err)
				}
			}
			pick := rand.New(rand.NewPCG(1, 1))
			b.ResetTimer()
			cpu0 := processCPU(b, fs.cmd.Process.Pid)
			for i := 0; i < b.N; i++ {
				mustRead(b, fs.coll, pick)
			}
			cpu := processCPU(b, fs.cmd.Process.Pid) - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(b.N), "server_cpu_us/op")
		})
	}
	// Blocks of 100 reads to minimongod and to floord by turns: the
	// medians of each block's server CPU per read and of minimongod's
	// excess over floord in the same pair of blocks (own_cpu_us, its own
	// work), with quartiles: the figures to compare on a shared machine.
	top.Run("alternating", func(b *testing.B) {
		const block = 100
		s := load(b)
		c := s.coll("bench", "c")
		fs := floor("floor", "floord")
		pick := rand.New(rand.NewPCG(1, 1))
		mustRead(b, c, pick)
		var wire, fl, own []float64
		perRead := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / block }
		b.ResetTimer()
		for done := 0; done < b.N; done += block {
			cpu0 := s.cpuTime(b)
			for i := 0; i < block; i++ {
				mustRead(b, c, pick)
			}
			w := perRead(s.cpuTime(b) - cpu0)
			cpu0 = processCPU(b, fs.cmd.Process.Pid)
			for i := 0; i < block; i++ {
				mustRead(b, fs.coll, pick)
			}
			f := perRead(processCPU(b, fs.cmd.Process.Pid) - cpu0)
			wire, fl, own = append(wire, w), append(fl, f), append(own, w-f)
		}
		b.StopTimer()
		reportQuartiles(b, "wire_cpu_us", wire)
		reportQuartiles(b, "floor_cpu_us", fl)
		reportQuartiles(b, "own_cpu_us", own)
	})
	var raw *wt.Cursor
	top.Run("raw", func(b *testing.B) {
		if raw == nil {
			_, s := rawEngine(top)
			cur, err := s.Cursor("table:c", true)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Begin(); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if err := cur.Insert(rawKey(i), benchDoc(r, i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Commit(false); err != nil {
				b.Fatal(err)
			}
			raw = cur
		}
		cur := raw
		pick := rand.New(rand.NewPCG(1, 1))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			v, err := cur.Search(rawKey(pick.IntN(n)))
			if err != nil || len(v) == 0 {
				b.Fatal(err)
			}
			_ = append([]byte(nil), v...)
		}
	})
}

package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/ftdc"
)

func writeProc(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSystemMetricsFromProc(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, "proc/stat", "cpu  100 2 30 4000 5 0 6 0 0 0\ncpu0 50 1 15 2000 2 0 3 0 0 0\ncpu1 50 1 15 2000 3 0 3 0 0 0\nintr 1 2\nctxt 777\nbtime 1700000000\nprocesses 42\nprocs_running 2\nprocs_blocked 0\n")
	writeProc(t, root, "proc/meminfo", "MemTotal:       16000000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\nDirty:               12 kB\n")
	writeProc(t, root, "proc/diskstats", "   8       0 sda 10 1 80 5 20 2 160 9 0 12 14 0 0 0 0\n   8       1 sda1 10 1 80 5 20 2 160 9 0 12 14\n   7       0 loop0 1 0 2 0 0 0 0 0 0 0 0\n 259 0 nvme0n1 0 0 0 0 0 0 0 0 0 0 0\n")
	for _, d := range []string{"sda", "nvme0n1", "loop0"} {
		writeProc(t, root, "sys/block/"+d+"/size", "1\n")
	}
	doc := finishDocument(appendSystemMetrics(make([]byte, 4), root))
	var got struct {
		CPU    map[string]int64            `bson:"cpu"`
		Memory map[string]int64            `bson:"memory"`
		Disks  map[string]map[string]int64 `bson:"disks"`
	}
	if err := bson.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	// USER_HZ ticks of 10 ms.
	if got.CPU["user_ms"] != 1000 || got.CPU["idle_ms"] != 40000 || got.CPU["num_cpus"] != 2 || got.CPU["ctxt"] != 777 || got.CPU["procs_running"] != 2 {
		t.Errorf("cpu %v", got.CPU)
	}
	if got.Memory["MemTotal_kb"] != 16000000 || got.Memory["Dirty_kb"] != 12 || len(got.Memory) != 3 {
		t.Errorf("memory %v (MemAvailable is not among mongod's fields)", got.Memory)
	}
	// A whole disk that did I/O; not its partition, a loop device or an
	// idle disk.
	if len(got.Disks) != 1 || got.Disks["sda"]["reads"] != 10 || got.Disks["sda"]["io_queued_ms"] != 14 {
		t.Errorf("disks %v", got.Disks)
	}
}

// BenchmarkFTDCSample is the cost of one diagnostic data sample
// (serverStatus, systemMetrics, into the Writer): at the default 1 s
// period, ns/op / 1e9 is the share of one core capture takes when idle.
func BenchmarkFTDCSample(b *testing.B) {
	s := openTestServer(b)
	sess, err := s.eng.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	c := &clientConn{s: s, sess: sess, name: "ftdc"}
	_, _, cfg := s.params.ftdcConfig()
	cfg.Metadata = func(at time.Time) (any, error) { return s.ftdcMetadata(c, at) }
	dir, err := ftdc.OpenDir(b.TempDir(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer dir.Close()
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if err := dir.Add(at, s.ftdcSample(c, at)); err != nil {
			b.Fatal(err)
		}
		at = at.Add(time.Second)
	}
}

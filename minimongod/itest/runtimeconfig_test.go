package itest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// runtimeConfigKeys holds every key WT_CONNECTION::reconfigure takes in
// WiredTiger 3.2.1 (wiredtiger.h), each with a plausible value.
var runtimeConfigKeys = []string{
	"async=(enabled=true,ops_max=128,threads=2)",
	"async=(enabled=false)",
	"cache_max_wait_ms=500",
	"cache_overflow=(file_max=200MB)",
	"cache_overhead=10",
	"cache_size=300MB",
	"checkpoint=(log_size=64MB,wait=30)",
	"checkpoint=(log_size=0,wait=0)",
	`compatibility=(release="3.2")`,
	`compatibility=(release="3.1")`,
	`compatibility=(release="3.0")`,
	`compatibility=(release="2.9")`,
	"debug_mode=(checkpoint_retention=2)",
	"debug_mode=(eviction=true)",
	"debug_mode=(rollback_error=50)",
	"debug_mode=(rollback_error=0)",
	"debug_mode=(table_logging=true)",
	"debug_mode=(checkpoint_retention=0,eviction=false,table_logging=false)",
	"error_prefix=minimongod",
	"eviction=(threads_max=6,threads_min=2)",
	"eviction_checkpoint_target=5",
	"eviction_dirty_target=10",
	"eviction_dirty_trigger=30",
	"eviction_target=70",
	"eviction_trigger=90",
	"file_manager=(close_handle_minimum=10,close_idle_time=5,close_scan_interval=1)",
	"io_capacity=(total=10MB)",
	"io_capacity=(total=0)",
	"log=(archive=false,os_cache_dirty_pct=20,prealloc=false,zero_fill=true)",
	"log=(archive=true,os_cache_dirty_pct=0,prealloc=true,zero_fill=false)",
	"lsm_manager=(merge=false,worker_thread_max=5)",
	"operation_tracking=(enabled=true)",
	"operation_tracking=(enabled=true,path=.)",
	"operation_tracking=(enabled=false)",
	"shared_cache=(chunk=10MB,name=pool,quota=0,reserve=0,size=500MB)",
	"shared_cache=(name=none)",
	"statistics=(all)",
	"statistics=(fast,clear)",
	"statistics=(none)",
	"statistics=(cache_walk,tree_walk)",
	"statistics=(fast)",
	`statistics_log=(json=true,on_close=true,sources=("file:"),timestamp="%FT%T",wait=1)`,
	`statistics_log=(sources=("table:"))`,
	"statistics_log=(wait=0)",
	"verbose=[checkpoint,evictserver,fileops,log,shared_cache,version]",
	"verbose=[]",
}

// runtimeConfigRefused are the settings of runtimeConfigKeys minimongod
// refuses, with the message it must give.
var runtimeConfigRefused = map[string]string{
	"operation_tracking=(enabled=true)":        refusedOpTracking,
	"operation_tracking=(enabled=true,path=.)": refusedOpTracking,
	"operation_tracking=(enabled=false)":       refusedOpTracking,
	`statistics_log=(sources=("table:"))`: "WiredTiger reconfiguration failed with error code (22): Invalid argument: " +
		`statistics_log sources configuration only supports objects of type "file" or "lsm"`,
}

const refusedOpTracking = "WiredTiger reconfiguration failed with error code (22): Invalid argument: " +
	"operation_tracking cannot be changed at runtime"

// TestEngineRuntimeConfigKeysNeverCrash sets every reconfigure key of
// WiredTiger 3.2.1, one at a time, and checks the server still answers;
// the settings of runtimeConfigRefused must be refused with BadValue,
// every other one taken.
func TestEngineRuntimeConfigKeysNeverCrash(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, cfg := range runtimeConfigKeys {
		err := setRuntimeConfig(s, cfg)
		var ce mongo.CommandError
		switch want, refused := runtimeConfigRefused[cfg]; {
		case refused && (!errors.As(err, &ce) || ce.Code != 2 || !strings.HasPrefix(ce.Message, want)):
			t.Errorf("setParameter %s: %v, want BadValue %q", cfg, err, want)
		case !refused && err != nil:
			t.Errorf("setParameter %s: %v, want it taken", cfg, err)
		}
		if err := answers(s, 1); err != nil {
			t.Errorf("after %s: %v", cfg, err)
			s = start(t)
		}
	}
	// What a key left behind must not stop the server shutting down and
	// opening its data again.
	s.stop()
	s = startAt(t, s.dbpath)
	if err := answers(s, 2); err != nil {
		t.Errorf("after a restart: %v", err)
	}
}

// TestOperationTrackingAtStartup checks the way the refusal of
// operation_tracking at runtime points to: given at startup, WiredTiger
// traces operations into the database directory and the server answers.
func TestOperationTrackingAtStartup(t *testing.T) {
	t.Parallel()
	s := start(t, "--wiredTigerEngineConfigString", "operation_tracking=(enabled=true)")
	if err := answers(s, 1); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(s.dbpath, "optrack-map.*"))
	if err != nil || len(files) == 0 {
		t.Errorf("no optrack-map file in %s (%v)", s.dbpath, err)
	}
	s.stop()
}

func setRuntimeConfig(s *server, cfg string) error {
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return s.db("admin").RunCommand(c, bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: cfg}}).Err()
}

// answers checks that s is running and takes a write, a read and
// serverStatus.
func answers(s *server, n int) error {
	select {
	case <-s.done:
		return fmt.Errorf("minimongod exited: %v\n%s", s.cmd.ProcessState, lastLines(s.log.String(), 30))
	default:
	}
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	coll := s.db("sweep").Collection("c")
	if _, err := coll.InsertOne(c, bson.M{"n": n}); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	if err := coll.FindOne(c, bson.M{"n": n}).Err(); err != nil {
		return fmt.Errorf("find: %w", err)
	}
	if err := s.db("admin").RunCommand(c, bson.D{{Key: "serverStatus", Value: 1}}).Err(); err != nil {
		return fmt.Errorf("serverStatus: %w", err)
	}
	return nil
}

// lastLines is the last n lines of text.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

package wt

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigKeys(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   []string
	}{
		{"", nil},
		{"cache_size=1GB", []string{"cache_size"}},
		{"eviction=(threads_min=1,threads_max=4),verbose=[api,log]", []string{"eviction", "verbose"}},
		{`statistics_log=(sources=("file:a","file:b"),wait=1), operation_tracking=(enabled=true)`, []string{"statistics_log", "operation_tracking"}},
		{"operation_tracking.enabled=true", []string{"operation_tracking.enabled"}},
	} {
		got, err := ConfigKeys(tc.config)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ConfigKeys(%q) = %q, %v; want %q", tc.config, got, err, tc.want)
		}
	}
}

// TestReconfigureRefusesOperationTracking checks that operation_tracking,
// which crashes WiredTiger 3.2.1 when turned on at runtime, is refused in
// every spelling and that the connection goes on working.
func TestReconfigureRefusesOperationTracking(t *testing.T) {
	c := openTest(t)
	for _, cfg := range []string{
		"operation_tracking=(enabled=true)",
		"cache_size=100MB,operation_tracking=(enabled=true,path=.)",
		"operation_tracking=(enabled=false)",
		"operation_tracking.enabled=true",
	} {
		err := c.Reconfigure(cfg)
		if codeOf(err) != codeInvalid || !strings.Contains(err.Error(), "operation_tracking cannot be changed at runtime") {
			t.Errorf("Reconfigure(%q) = %v, want EINVAL refusing operation_tracking", cfg, err)
		}
	}
	if err := c.Reconfigure("cache_size=100MB"); err != nil {
		t.Errorf("Reconfigure(cache_size=100MB) = %v", err)
	}
	s, err := c.OpenSession("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create("table:t", "key_format=u,value_format=u"); err != nil {
		t.Fatal(err)
	}
	cur, err := s.Cursor("table:t", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.Insert(key(1), []byte("v")); err != nil {
		t.Fatal(err)
	}
}

package hostctl

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServerSpecArgs(t *testing.T) {
	tests := []struct {
		name string
		spec ServerSpec
		want []string
	}{
		{
			name: "defaults",
			spec: ServerSpec{Binary: "mongod", DBPath: "/tmp/db", Port: 27017},
			want: []string{"--port", "27017", "--bind_ip", "127.0.0.1", "--dbpath", "/tmp/db"},
		},
		{
			name: "every knob",
			spec: ServerSpec{
				Binary: "mongod", DBPath: "/tmp/db", Port: 9900, BindIP: "127.0.0.1,::1",
				Settings: Settings{
					CacheSizeGB: 0.25, EngineConfig: "eviction_target=60,eviction_trigger=80", SyncDelay: 30,
					SetParameters: map[string]string{"wiredTigerConcurrentWriteTransactions": "64", "wiredTigerConcurrentReadTransactions": "128"},
					ExtraArgs:     []string{"--nojournal"},
				},
			},
			want: []string{
				"--port", "9900", "--bind_ip", "127.0.0.1,::1", "--dbpath", "/tmp/db",
				"--wiredTigerCacheSizeGB", "0.25",
				"--wiredTigerEngineConfigString", "eviction_target=60,eviction_trigger=80",
				"--syncdelay", "30",
				"--setParameter", "wiredTigerConcurrentReadTransactions=128",
				"--setParameter", "wiredTigerConcurrentWriteTransactions=64",
				"--nojournal",
			},
		},
		{
			name: "large and fractional values are not in exponent form",
			spec: ServerSpec{Binary: "mongod", DBPath: "d", Port: 1, Settings: Settings{CacheSizeGB: 1500.5, SyncDelay: 2e6}},
			want: []string{"--port", "1", "--bind_ip", "127.0.0.1", "--dbpath", "d",
				"--wiredTigerCacheSizeGB", "1500.5", "--syncdelay", "2000000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.spec.Args()); d != "" {
				t.Errorf("Args (-want +got):\n%s", d)
			}
		})
	}
}

func TestServerSpecValidate(t *testing.T) {
	good := ServerSpec{Binary: "mongod", DBPath: "/tmp/db", Port: 27017}
	tests := []struct {
		name    string
		edit    func(*ServerSpec)
		wantErr string
	}{
		{"good", func(*ServerSpec) {}, ""},
		{"server default cache", func(s *ServerSpec) { s.CacheSizeGB = 0 }, ""},
		{"smallest cache", func(s *ServerSpec) { s.CacheSizeGB = 0.25 }, ""},
		{"largest cache", func(s *ServerSpec) { s.CacheSizeGB = 10000 }, ""},
		{"port 0 picks one", func(s *ServerSpec) { s.Port = 0 }, ""},
		{"ipv6 loopback", func(s *ServerSpec) { s.BindIP = "::1" }, ""},
		{"cache too small", func(s *ServerSpec) { s.CacheSizeGB = 0.1 },
			"cacheSizeGB 0.1: storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{"negative cache", func(s *ServerSpec) { s.CacheSizeGB = -1 },
			"cacheSizeGB -1: storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{"cache too large", func(s *ServerSpec) { s.CacheSizeGB = 10001 },
			"cacheSizeGB 10001: storage.wiredTiger.engineConfig.cacheSizeGB must be less than or equal to 10000"},
		{"port too large", func(s *ServerSpec) { s.Port = 70000 }, "port 70000: net.port must be less than or equal to 65535"},
		{"negative port", func(s *ServerSpec) { s.Port = -1 }, "port -1: net.port must be greater than or equal to 0"},
		{"public bind", func(s *ServerSpec) { s.BindIP = "0.0.0.0" }, `bind_ip "0.0.0.0"`},
		{"one public in a list", func(s *ServerSpec) { s.BindIP = "127.0.0.1,10.1.1.1" }, "only loopback targets"},
		{"negative syncdelay", func(s *ServerSpec) { s.SyncDelay = -1 }, "syncdelay -1: syncdelay out of allowed range (0-9000000)"},
		{"no binary", func(s *ServerSpec) { s.Binary = "" }, "binary: no server executable"},
		{"no dbpath", func(s *ServerSpec) { s.DBPath = "" }, "dbpath: no data directory"},
		{"bad parameter name", func(s *ServerSpec) { s.SetParameters = map[string]string{"a=b": "1"} }, `setParameter "a=b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.edit(&s)
			err := s.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want containing %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "validate mongod settings: ") {
				t.Errorf("error %q lacks the verb prefix", err)
			}
		})
	}
}

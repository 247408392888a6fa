package hostctl

import (
	"strings"
	"testing"
)

func TestCheckArgsRefusesPathFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the error: the flag and what to use instead
	}{
		{[]string{"-f", "/etc/passwd"}, "args[1] -f is refused: a playbook names no configuration file"},
		{[]string{"-f/etc/passwd"}, "args[1] -f is refused (write long flags with two dashes)"},
		{[]string{"--config", "/x"}, "args[1] --config is refused: a playbook names no configuration file"},
		{[]string{"--config=/x"}, "--config is refused"},
		{[]string{"-config", "/x"}, "args[1] -config is refused"},
		{[]string{"--configExpand", "exec"}, "--configExpand is refused"},
		{[]string{"--nojournal", "--logpath", "/tmp/x.log"}, "args[2] --logpath is refused: the run directory holds the server's log"},
		{[]string{"--logpath=/tmp/x.log"}, "--logpath is refused: the run directory holds the server's log"},
		{[]string{"-logpath", "/tmp/x.log"}, "-logpath is refused"},
		{[]string{"--LogPath", "/x"}, "--LogPath is refused"},
		{[]string{"--syslog"}, "--syslog is refused"},
		{[]string{"--dbpath", "/x"}, `--dbpath is refused: use dbpath = "..." (inside the run directory, or under a directory the operator allowed with wtd run --allow-dir)`},
		{[]string{"--repairpath", "/x"}, "--repairpath is refused"},
		{[]string{"--pidfilepath", "/x"}, "--pidfilepath is refused: wtd knows the process id: m.pid"},
		{[]string{"--keyFile", "/x"}, "--keyFile is refused: wtd talks to its servers on loopback without TLS or authentication"},
		{[]string{"--tlsCertificateKeyFile=/x"}, "--tlsCertificateKeyFile is refused"},
		{[]string{"--sslPEMKeyFile", "/x"}, "--sslPEMKeyFile is refused"},
		{[]string{"--tlsCAFile", "/x"}, "--tlsCAFile is refused"},
		{[]string{"--sslCAFile", "/x"}, "--sslCAFile is refused"},
		{[]string{"--tlsCRLFile", "/x"}, "--tlsCRLFile is refused"},
		{[]string{"--tlsClusterFile", "/x"}, "--tlsClusterFile is refused"},
		{[]string{"--encryptionKeyFile", "/x"}, "--encryptionKeyFile is refused"},
		{[]string{"--unixSocketPrefix", "/x"}, "--unixSocketPrefix is refused: use --nounixsocket"},
		{[]string{"--timeZoneInfo", "/x"}, "--timeZoneInfo is refused"},
		{[]string{"--auditPath", "/x"}, "--auditPath is refused"},
		{[]string{"--fork"}, "--fork is refused"},
		{[]string{"--port", "1"}, "--port is refused: use port = N"},
		{[]string{"--bind_ip_all"}, "--bind_ip_all is refused: wtd's servers listen on 127.0.0.1 only"},
		{[]string{"--bind_ip", "0.0.0.0"}, "--bind_ip is refused"},
		{[]string{"--wiredTigerCacheSizeGB", "1"}, "--wiredTigerCacheSizeGB is refused: use cacheSizeGB = N"},
		{[]string{"--wiredTigerEngineConfigString=x"}, `--wiredTigerEngineConfigString is refused: use engineConfig = "..."`},
		{[]string{"--syncdelay", "1"}, "--syncdelay is refused: use syncdelay = N"},
		{[]string{"--ldapServers", "10.1.2.3"}, "--ldapServers is refused: wtd's servers reach no other host"},
		{[]string{"--setParameter", "diagnosticDataCollectionDirectoryPath=/x"}, "args[2] --setParameter diagnosticDataCollectionDirectoryPath is refused: its value is a path"},
		{[]string{"--setParameter=diagnosticDataCollectionDirectoryPath=/x"}, "--setParameter diagnosticDataCollectionDirectoryPath is refused"},
		{[]string{"--setParameter", "--logpath=/x"}, "args[2] --logpath is refused"},
		{[]string{"--setParameter", "wiredTigerEngineRuntimeConfig=log=(path=/x)"}, `args[2] --setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "log.path" is refused`},
		{[]string{`--setParameter=wiredTigerEngineRuntimeConfig="extensions"=[/x.so]`}, `args[1] --setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "extensions" is refused`},
		{[]string{"--setParameter", "WiredTigerEngineRuntimeConfig=operation_tracking=(path=/x)"}, `the WiredTiger key "operation_tracking.path" is refused`},
		{[]string{"--setParameter", "cloudFreeMonitoringEndpointURL=http://10.0.0.1/"}, "--setParameter cloudFreeMonitoringEndpointURL is refused: its value is a web service on another host"},
		{[]string{"--setParameter", "ldapServers=10.0.0.1"}, "--setParameter ldapServers is refused: LDAP settings name LDAP servers"},
		{[]string{"--setParameter", "opensslDiffieHellmanParameters=/x.pem"}, "--setParameter opensslDiffieHellmanParameters is refused: its value is a PEM file"},
		{[]string{"--setParameter", "saslauthdPath=/x"}, "--setParameter saslauthdPath is refused"},
		{[]string{"--setParameter", "backtraceLogFile=/x"}, "--setParameter backtraceLogFile is refused"},
		{[]string{"--setParameter", "trafficRecordingDirectory=/x"}, "--setParameter trafficRecordingDirectory is refused"},
		{[]string{"--setParameter", "mongotHost=10.0.0.1:27028"}, "--setParameter mongotHost is refused"},
		{[]string{"--setParameter", "auditEncryptionHeaderMetadataFile=/x"}, "--setParameter auditEncryptionHeaderMetadataFile is refused: wtd's servers keep no audit log"},
		{[]string{"--enableFreeMonitoring", "on"}, "args[1] --enableFreeMonitoring is refused: free monitoring sends the server's metrics to a web service on another host"},
		{[]string{"--auditDestination", "syslog"}, "args[1] --auditDestination is refused: wtd's servers keep no audit log"},
		{[]string{"--auditLocalKeyFile=/x"}, "--auditLocalKeyFile is refused"},
		{[]string{"--ldapAuthzQueryTemplate", "x"}, "--ldapAuthzQueryTemplate is refused"},
		{[]string{"--kmipClientCertificateSelector", "x"}, "--kmipClientCertificateSelector is refused"},
		{[]string{"--source", "10.0.0.1:27017"}, "--source is refused: wtd's servers reach no other host"},
		{[]string{"--wiredTigerCollectionConfigString", `source="file:/x"`}, `args[2] --wiredTigerCollectionConfigString: the WiredTiger key "source" is refused`},
		{[]string{"--wiredTigerCollectionConfigString", "source=file:/x"}, "args[2] --wiredTigerCollectionConfigString: it does not parse as a WiredTiger configuration string"},
		{[]string{"--wiredTigerIndexConfigString=x=1,log=(path=/x)"}, `args[1] --wiredTigerIndexConfigString: the WiredTiger key "log.path" is refused`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			err := CheckArgs(tt.args)
			if err == nil {
				t.Fatalf("CheckArgs(%q) = nil, want an error containing %q", tt.args, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckArgs(%q) = %q, want it to contain %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestCheckArgsAllowsPathFreeFlags(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--nojournal", "--directoryperdb", "-vvv", "--quiet", "--notablescan", "--logappend"},
		{"--slowms", "50", "--slowOpSampleRate=0.5"},
		{"--setParameter", "ttlMonitorEnabled=false", "--setParameter=cursorTimeoutMillis=1000"},
		{"--setParameter", "wiredTigerEngineRuntimeConfig=eviction=(threads_max=8),eviction_target=70"},
		{"--wiredTigerCollectionBlockCompressor", "zstd", "--wiredTigerCollectionConfigString", "block_compressor=zstd"},
		{"--storageEngine", "wiredTiger", "--", "-"},
	} {
		if err := CheckArgs(args); err != nil {
			t.Errorf("CheckArgs(%q) = %v, want nil", args, err)
		}
	}
}

func TestValidateChecksArgsParametersAndEngineConfig(t *testing.T) {
	good := ServerSpec{Binary: "mongod", DBPath: "/tmp/db", Port: 27017}
	for name, tt := range map[string]struct {
		edit func(*ServerSpec)
		want string
	}{
		"args": {func(s *ServerSpec) { s.ExtraArgs = []string{"-f", "/etc/shadow"} }, "args[1] -f is refused"},
		"setParameter": {func(s *ServerSpec) {
			s.SetParameters = map[string]string{"diagnosticDataCollectionDirectoryPath": "/x"}
		}, "setParameter diagnosticDataCollectionDirectoryPath is refused"},
		"engineConfig":        {func(s *ServerSpec) { s.EngineConfig = "log=(path=/x)" }, `engineConfig: the WiredTiger key "log.path" is refused`},
		"quoted engineConfig": {func(s *ServerSpec) { s.EngineConfig = `log=(enabled=true,"path"="/x")` }, `engineConfig: the WiredTiger key "log.path" is refused`},
		"setParameter wiredTigerEngineRuntimeConfig": {func(s *ServerSpec) {
			s.SetParameters = map[string]string{"wiredTigerEngineRuntimeConfig": `"extensions"=["/x.so"]`}
		}, `setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "extensions" is refused`},
		"setParameter ldap": {func(s *ServerSpec) {
			s.SetParameters = map[string]string{"ldapServers": "10.0.0.1"}
		}, "setParameter ldapServers is refused"},
	} {
		s := good
		tt.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "validate mongod settings: ") {
			t.Errorf("%s: Validate() = %v, want %q", name, err, tt.want)
		}
	}
}

func TestCheckParameter(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value any
		want  string // "" when allowed
	}{
		{"cursorTimeoutMillis", int32(1000), ""},
		{"wiredTigerEngineRuntimeConfig", "eviction_target=70", ""},
		{"wiredTigerEngineRuntimeConfig", "operation_tracking=(enabled=true,path=/x)", `wiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused`},
		{"wiredtigerengineruntimeconfig", `"extensions"=[/x.so]`, `wiredtigerengineruntimeconfig: the WiredTiger key "extensions" is refused`},
		{"wiredTigerEngineRuntimeConfig", int32(1), "wiredTigerEngineRuntimeConfig must be a string (a WiredTiger configuration string), got int32"},
		{"diagnosticDataCollectionDirectoryPath", "/x", "diagnosticDataCollectionDirectoryPath is refused: its value is a path"},
		{"DIAGNOSTICDATACOLLECTIONDIRECTORYPATH", "/x", "DIAGNOSTICDATACOLLECTIONDIRECTORYPATH is refused"},
		{"cloudFreeMonitoringEndpointURL", "http://x", "cloudFreeMonitoringEndpointURL is refused"},
		{"ldapQueryPassword", "x", "ldapQueryPassword is refused: LDAP settings"},
		{"oidcIdentityProviders", "[]", "oidcIdentityProviders is refused"},
		{"searchIndexManagementHostAndPort", "10.0.0.1:1", "searchIndexManagementHostAndPort is refused"},
	} {
		err := CheckParameter(tt.name, tt.value)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckParameter(%s, %v) = %v, want nil", tt.name, tt.value, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckParameter(%s, %v) = %v, want %q", tt.name, tt.value, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "/x"):
			t.Errorf("CheckParameter(%s, %v) = %q: it quotes the value", tt.name, tt.value, err)
		}
	}
}

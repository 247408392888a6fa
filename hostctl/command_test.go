package hostctl

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestCheckCommand(t *testing.T) {
	wt := func(cfg string) bson.D {
		return bson.D{{Key: "wiredTiger", Value: bson.D{{Key: "configString", Value: cfg}}}}
	}
	for name, tt := range map[string]struct {
		cmd  bson.D
		want string // "" when allowed
	}{
		"ping":                           {bson.D{{Key: "ping", Value: 1}}, ""},
		"setParameter":                   {bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1000}}, ""},
		"reconfigure":                    {bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: "eviction_target=70"}}, ""},
		"getParameter of a refused name": {bson.D{{Key: "getParameter", Value: 1}, {Key: "diagnosticDataCollectionDirectoryPath", Value: 1}}, ""},
		"create":                         {bson.D{{Key: "create", Value: "c"}, {Key: "storageEngine", Value: wt("block_compressor=zstd")}}, ""},
		"runtime config path": {bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: "operation_tracking=(enabled=true,path=/x)"}},
			`setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused`},
		"runtime config extensions, second field": {bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: `"extensions"=["/x.so"]`}},
			`setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "extensions" is refused`},
		"setParameter not first": {bson.D{{Key: "wiredTigerEngineRuntimeConfig", Value: "log=(path=/x)"}, {Key: "setParameter", Value: 1}},
			`the WiredTiger key "log.path" is refused`},
		"other letter case": {bson.D{{Key: "setparameter", Value: 1}, {Key: "WIREDTIGERENGINERUNTIMECONFIG", Value: "log=(path=/x)"}},
			`setParameter WIREDTIGERENGINERUNTIMECONFIG: the WiredTiger key "log.path" is refused`},
		"runtime config not a string": {bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: bson.D{{Key: "log", Value: "x"}}}},
			"wiredTigerEngineRuntimeConfig must be a string"},
		"refused parameter": {bson.D{{Key: "setParameter", Value: 1}, {Key: "diagnosticDataCollectionDirectoryPath", Value: "/x"}},
			"setParameter diagnosticDataCollectionDirectoryPath is refused: its value is a path"},
		"ldap parameter": {bson.D{{Key: "setParameter", Value: 1}, {Key: "ldapServers", Value: "10.0.0.1"}},
			"setParameter ldapServers is refused"},
		"free monitoring endpoint": {bson.D{{Key: "setParameter", Value: 1}, {Key: "cloudFreeMonitoringEndpointURL", Value: "http://10.0.0.1/"}},
			"setParameter cloudFreeMonitoringEndpointURL is refused"},
		"setFreeMonitoring": {bson.D{{Key: "setFreeMonitoring", Value: 1}, {Key: "action", Value: "enable"}},
			"setFreeMonitoring is refused: free monitoring sends the server's metrics to a web service on another host"},
		"createBackup": {bson.D{{Key: "createBackup", Value: 1}, {Key: "backupDir", Value: "/x"}}, "createBackup is refused"},
		"create configString": {bson.D{{Key: "create", Value: "c"}, {Key: "storageEngine", Value: wt(`source="file:/x.wt"`)}},
			`storageEngine.wiredTiger.configString: the WiredTiger key "source" is refused`},
		"createIndexes configString": {bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "storageEngine", Value: wt(`type="file:/x"`)}}}}},
			`indexes.0.storageEngine.wiredTiger.configString: the WiredTiger key "type" is refused`},
		"indexOptionDefaults": {bson.D{{Key: "create", Value: "c"}, {Key: "indexOptionDefaults", Value: bson.D{{Key: "storageEngine", Value: wt("log=(path=/x)")}}}},
			`indexOptionDefaults.storageEngine.wiredTiger.configString: the WiredTiger key "log.path" is refused`},
		"applyOps": {bson.D{{Key: "applyOps", Value: bson.A{bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "d.$cmd"},
			{Key: "o", Value: bson.D{{Key: "create", Value: "c"}, {Key: "storageEngine", Value: wt("extensions=[/x.so]")}}}}}}},
			`applyOps.0.o.storageEngine.wiredTiger.configString: the WiredTiger key "extensions" is refused`},
	} {
		err := CheckCommand(tt.cmd)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: CheckCommand = %v, want nil", name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: CheckCommand = %v, want %q", name, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "/x"):
			t.Errorf("%s: CheckCommand = %q: it quotes the path", name, err)
		}
	}
}

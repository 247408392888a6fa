package engine

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/hostctl"
)

// wtRuntimeDefaults are the values a mongod 4.x runs with for the
// WiredTiger keys playbooks reconfigure, when its startup configString does
// not set them: the defaults of the table of knobs (WiredTiger's, and
// mongod's own eviction threads).
var wtRuntimeDefaults = hostctl.WTDefaults()

// reconfigureBefore works out the configuration that puts back the keys
// cfg changes: each key's value in the server's startup configString
// (getCmdLineOpts), the cache's size in force (serverStatus) for
// cache_size, else the value mongod runs with by default
// (wtRuntimeDefaults). WiredTiger cannot be asked for its current
// configuration, so a key none of these give is refused (keep = true
// makes the change without a way back).
func (s *Server) reconfigureBefore(ctx context.Context, cfg string) (string, error) {
	startup := map[string]string{}
	if raw, err := s.Command(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}}); err == nil {
		if v, err := parsedAt(raw, keyConfigString); err == nil {
			pairs, _ := hostctl.SplitWTConfig(v.StringValue())
			for _, kv := range pairs {
				startup[kv[0]] = kv[1]
			}
		}
	}
	pairs, err := hostctl.SplitWTConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("read the configuration string: %w", err)
	}
	var parts []string
	for _, kv := range pairs {
		k := kv[0]
		v, ok := startup[k]
		if !ok && k == "cache_size" {
			raw, err := s.ServerStatus(ctx)
			if err == nil {
				if bytes, err := raw.LookupErr("wiredTiger", "cache", "maximum bytes configured"); err == nil {
					if f, ok2 := bytes.AsFloat64OK(); ok2 && f > 0 {
						v, ok = fmt.Sprintf("%.0f", f), true
					} else if n, ok2 := bytes.AsInt64OK(); ok2 && n > 0 {
						v, ok = fmt.Sprint(n), true
					}
				}
			}
		}
		if !ok {
			v, ok = wtRuntimeDefaults[k]
		}
		if !ok {
			return "", fmt.Errorf("wtd cannot tell the value of %s before the change, so it could not put it back at the end of the run (pass keep = true to change it for good)", k)
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ","), nil
}

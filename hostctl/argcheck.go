package hostctl

import (
	"fmt"
	"regexp"
	"strings"
)

// The sandbox of a playbook's server settings. A playbook names only flags
// that take no path: mongod would read a file named on its command line
// (and echo parts of it in errors) or create files there. Flags that wtd
// sets itself, and flags that make the server reach another host, are
// refused too. Each refusal says what to use instead.
//
// The list follows mongod 4.4's option definitions (mongodb/mongo
// src/mongo/db/server_options_general.idl, server_options_base.idl,
// server_options_nongeneral.idl, mongod_options_storage.idl,
// src/mongo/util/net/ssl_options_server.idl), the enterprise and Percona
// options that name files or hosts (audit, encryption at rest, KMIP, Vault,
// LDAP), and the options wtd sets itself (spec.go's Args).

const (
	insteadConfig = "a playbook names no configuration file: give settings as mongod.start options (cacheSizeGB, engineConfig, syncdelay, setParameter, port) or as path-free flags in args"
	insteadKeys   = "wtd talks to its servers on loopback without TLS or authentication, so they take no key or certificate files"
	insteadRemote = "wtd's servers reach no other host: only loopback addresses are allowed"
	insteadBind   = "wtd's servers listen on 127.0.0.1 only"
)

// refusals are the refused flags, by reason; the reason says what to use
// instead.
var refusals = []struct {
	why   string
	flags []string
}{
	{insteadConfig, []string{"config", "f", "configExpand"}},
	{`use dbpath = "..." (inside the run directory, or under a directory the operator allowed with wtd run --allow-dir)`,
		[]string{"dbpath", "repairpath"}},
	{"the run directory holds the server's log: wtd captures its output", []string{"logpath", "syslog", "auditPath"}},
	{"wtd knows the process id: m.pid", []string{"pidfilepath"}},
	{"wtd runs the server in the foreground to watch it", []string{"fork"}},
	{"use --nounixsocket, or keep the default socket directory", []string{"unixSocketPrefix"}},
	{"the server keeps its built-in time zone data", []string{"timeZoneInfo"}},
	{"use port = N", []string{"port"}},
	{"use cacheSizeGB = N", []string{"wiredTigerCacheSizeGB"}},
	{`use engineConfig = "..."`, []string{"wiredTigerEngineConfigString"}},
	{"use syncdelay = N", []string{"syncdelay"}},
	{insteadBind, []string{"bind_ip", "bind_ip_all"}},
	{insteadRemote, []string{"kmipServerName", "vaultServerName", "ldapServers"}},
	{insteadKeys, []string{
		"keyFile", "tlsCertificateKeyFile", "sslPEMKeyFile", "tlsClusterFile", "sslClusterFile",
		"tlsCAFile", "sslCAFile", "tlsClusterCAFile", "sslClusterCAFile", "tlsCRLFile", "sslCRLFile",
		"encryptionKeyFile", "kmipServerCAFile", "kmipClientCertificateFile", "vaultTokenFile", "vaultServerCAFile",
	}},
}

// refusedFlags maps a refused flag's name, lower case, to its reason.
var refusedFlags = map[string]string{}

func init() {
	for _, r := range refusals {
		for _, n := range r.flags {
			refusedFlags[strings.ToLower(n)] = r.why
		}
	}
}

// refusedParameters are server parameters whose value is a path.
var refusedParameters = map[string]string{
	"diagnosticdatacollectiondirectorypath": "the server keeps its diagnostic data in the dbpath",
}

// wtConfigFlags are flags whose value is a WiredTiger configuration string.
var wtConfigFlags = map[string]bool{"wiredtigercollectionconfigstring": true, "wiredtigerindexconfigstring": true}

// CheckArgs checks the extra arguments a playbook gives the server. It
// reads every argument as mongod's parser would (--name, --name=value,
// the single-dash -name, and -f with its value attached) and refuses the
// flags that name a file or directory, that wtd sets itself or that reach
// another host, with the option to use instead. Values are checked too:
// the names of --setParameter and the WiredTiger strings of
// --wiredTigerCollectionConfigString and --wiredTigerIndexConfigString.
func CheckArgs(args []string) error {
	for i := 0; i < len(args); i++ {
		name, value, hasValue, ok := flagName(args[i])
		if !ok {
			continue
		}
		key := strings.ToLower(name)
		if why, refused := refusedFlags[key]; refused {
			return fmt.Errorf("args[%d] %s is refused: %s", i+1, flagText(args[i], name), why)
		}
		if strings.HasPrefix(args[i], "-") && !strings.HasPrefix(args[i], "--") && strings.HasPrefix(key, "f") {
			// -f/path: mongod reads a short flag's value attached to it.
			return fmt.Errorf("args[%d] -f is refused (write long flags with two dashes): %s", i+1, insteadConfig)
		}
		if key != "setparameter" && !wtConfigFlags[key] {
			continue
		}
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			value = args[i]
		}
		if key == "setparameter" {
			p, _, _ := strings.Cut(value, "=")
			if err := CheckParameterName(p); err != nil {
				return fmt.Errorf("args[%d] --setParameter %w", i+1, err)
			}
			continue
		}
		if err := CheckWTConfig(value); err != nil {
			return fmt.Errorf("args[%d] --%s %w", i+1, name, err)
		}
	}
	return nil
}

// flagName returns the option name of an argument that is a flag ("-x",
// "--x", "-x=v", "--x=v"), and the value attached with '='.
func flagName(arg string) (name, value string, hasValue, ok bool) {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return "", "", false, false
	}
	name = strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	name, value, hasValue = strings.Cut(name, "=")
	return name, value, hasValue, name != ""
}

// flagText names the flag of arg as the playbook wrote it, without its
// value.
func flagText(arg, name string) string {
	if strings.HasPrefix(arg, "--") {
		return "--" + name
	}
	return "-" + name
}

// CheckParameterName refuses server parameters whose value is a path.
func CheckParameterName(name string) error {
	if why, refused := refusedParameters[strings.ToLower(strings.TrimSpace(name))]; refused {
		return fmt.Errorf("%s is refused: its value is a path, and %s", name, why)
	}
	return nil
}

// wtPathKey matches the WiredTiger configuration keys that name a file, a
// directory, a library or a remote store: log=(path=...),
// extensions=[...], tiered_storage=(bucket=...), chunk_cache=(storage_path=...).
var wtPathKey = regexp.MustCompile(`(?i)(?:^|[,(\[\s])([a-z_]*path|extensions|tiered_storage|bucket[a-z_]*|source)\s*[=:]`)

// CheckWTConfig refuses a WiredTiger configuration string that names a
// file, directory, shared library or remote store: WiredTiger keeps its
// files in the dbpath.
func CheckWTConfig(cfg string) error {
	if m := wtPathKey.FindStringSubmatch(cfg); m != nil {
		return fmt.Errorf("%q: the WiredTiger key %q is refused: it names a file, directory, library or remote store, and WiredTiger keeps its files in the dbpath", cfg, m[1])
	}
	return nil
}

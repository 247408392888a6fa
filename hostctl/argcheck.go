package hostctl

import (
	"fmt"
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

// insteadConfig says what to give instead of a configuration file.
var insteadConfig = "a playbook names no configuration file: give settings as mongod.start options (" +
	strings.Join(SettingOptions(), ", ") + ", port) or as path-free flags in args"

const (
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
	{"the run directory holds the server's log: wtd captures its output", []string{"logpath", "syslog"}},
	{"wtd knows the process id: m.pid", []string{"pidfilepath"}},
	{"wtd runs the server in the foreground to watch it", []string{"fork"}},
	{"use --nounixsocket, or keep the default socket directory", []string{"unixSocketPrefix"}},
	{"the server keeps its built-in time zone data", []string{"timeZoneInfo"}},
	{"use port = N", []string{"port"}},
	{insteadBind, []string{"bind_ip", "bind_ip_all"}},
	{insteadRemote, []string{"kmipServerName", "vaultServerName", "ldapServers", "source"}},
	{"free monitoring sends the server's metrics to a web service on another host: " + insteadRemote,
		[]string{"enableFreeMonitoring", "freeMonitoringTag"}},
	{insteadKeys, []string{
		"keyFile", "tlsCertificateKeyFile", "sslPEMKeyFile", "tlsClusterFile", "sslClusterFile",
		"tlsCAFile", "sslCAFile", "tlsClusterCAFile", "sslClusterCAFile", "tlsCRLFile", "sslCRLFile",
		"encryptionKeyFile", "kmipServerCAFile", "kmipClientCertificateFile", "vaultTokenFile", "vaultServerCAFile",
	}},
}

// refusedPrefixes refuse every flag and server parameter whose name starts
// with one of them (lower case): audit logs are files or syslog, and LDAP,
// KMIP and Vault settings name other hosts and their credentials.
var refusedPrefixes = []struct{ prefix, why string }{
	{"audit", "wtd's servers keep no audit log (it is a file or syslog, outside the run directory)"},
	{"ldap", "LDAP settings name LDAP servers and their credentials, and " + insteadRemote},
	{"kmip", "KMIP settings name a key server and its files, and " + insteadRemote},
	{"vault", "Vault settings name a key server and its files, and " + insteadRemote},
}

// refusedFlags maps a refused flag's name, lower case, to its reason.
var refusedFlags = map[string]string{}

func init() {
	for flag, why := range knobFlagRefusals() {
		refusedFlags[flag] = why
	}
	for _, r := range refusals {
		for _, n := range r.flags {
			refusedFlags[strings.ToLower(n)] = r.why
		}
	}
}

// flagRefusal returns why a flag (lower case) is refused.
func flagRefusal(key string) (string, bool) {
	if why, ok := refusedFlags[key]; ok {
		return why, true
	}
	return prefixRefusal(key)
}

func prefixRefusal(key string) (string, bool) {
	for _, p := range refusedPrefixes {
		if strings.HasPrefix(key, p.prefix) {
			return p.why, true
		}
	}
	return "", false
}

// parameterRefusals are the server parameters that name a file or another
// host, from mongod's parameter list (4.4 to 8.0, community and
// enterprise), besides the prefixes of refusedPrefixes.
var parameterRefusals = map[string]string{
	"diagnosticDataCollectionDirectoryPath": "its value is a path, and the server keeps its diagnostic data in the dbpath",
	"backtraceLogFile":                      "its value is a path, and the server writes stack traces to its log, which wtd keeps",
	"trafficRecordingDirectory":             "its value is a directory that traffic recordings are written to",
	"cloudFreeMonitoringEndpointURL":        "its value is a web service on another host that free monitoring sends metrics to, and " + insteadRemote,
	"opensslDiffieHellmanParameters":        "its value is a PEM file; " + insteadKeys,
	"saslauthdPath":                         "its value is the path of saslauthd's socket; " + insteadKeys,
	"oidcIdentityProviders":                 "it names identity providers on other hosts that the server fetches keys from; " + insteadKeys,
	"mongotHost":                            "its value is a search server on another host, and " + insteadRemote,
	"searchIndexManagementHostAndPort":      "its value is a search server on another host, and " + insteadRemote,
}

// refusedParameters maps parameterRefusals' names, lower case, to their
// reason.
var refusedParameters = map[string]string{}

func init() {
	for n, why := range parameterRefusals {
		refusedParameters[strings.ToLower(n)] = why
	}
}

// wtConfigFlag reports whether a flag (lower case) takes a WiredTiger
// configuration string: --wiredTigerCollectionConfigString,
// --wiredTigerIndexConfigString and any other *ConfigString flag of
// WiredTiger's (--wiredTigerEngineConfigString is refused by name).
func wtConfigFlag(key string) bool {
	return strings.HasPrefix(key, "wiredtiger") && strings.HasSuffix(key, "configstring")
}

// wtConfigParameter reports whether a server parameter (lower case) takes a
// WiredTiger configuration string (wiredTigerEngineRuntimeConfig).
func wtConfigParameter(key string) bool {
	return strings.HasPrefix(key, "wiredtiger") && strings.Contains(key, "config")
}

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
		if why, refused := flagRefusal(key); refused {
			return fmt.Errorf("args[%d] %s is refused: %s", i+1, flagText(args[i], name), why)
		}
		if strings.HasPrefix(args[i], "-") && !strings.HasPrefix(args[i], "--") && strings.HasPrefix(key, "f") {
			// -f/path: mongod reads a short flag's value attached to it.
			return fmt.Errorf("args[%d] -f is refused (write long flags with two dashes): %s", i+1, insteadConfig)
		}
		if key != "setparameter" && !wtConfigFlag(key) {
			continue
		}
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			value = args[i]
		}
		if key == "setparameter" {
			p, v, _ := strings.Cut(value, "=")
			if err := CheckParameter(p, v); err != nil {
				return fmt.Errorf("args[%d] --setParameter %w", i+1, err)
			}
			continue
		}
		if err := CheckWTConfig(value); err != nil {
			return fmt.Errorf("args[%d] --%s: %w", i+1, name, err)
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

// CheckParameter refuses a server parameter that names a file or another
// host (refusedParameters, refusedPrefixes), and checks the value of one
// that takes a WiredTiger configuration string (wiredTigerEngineRuntimeConfig,
// which must then be a string) with CheckWTConfig. Names are compared
// without regard to case. The error names the parameter, never its value.
func CheckParameter(name string, value any) error {
	key := strings.ToLower(strings.TrimSpace(name))
	why, refused := refusedParameters[key]
	if !refused {
		why, refused = prefixRefusal(key)
	}
	if refused {
		return fmt.Errorf("%s is refused: %s", name, why)
	}
	if !wtConfigParameter(key) {
		return checkParameterKnob(name, value)
	}
	cfg, ok := value.(string)
	if !ok {
		return fmt.Errorf("%s must be a string (a WiredTiger configuration string), got %T", name, value)
	}
	if err := CheckWTConfig(cfg); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := CheckWTKnobs(cfg); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

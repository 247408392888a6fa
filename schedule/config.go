// Package schedule is wtd's daemon half without Lua: the config file
// (schedules on cron specs, off-peak windows), the scheduler that fires runs
// through a Launcher under the host's experiment lock, skips and records a
// fire it cannot take, catches up a fire missed while the daemon was down,
// opens and closes windows with setParameter on an existing server, and
// reloads or stops on signals.
package schedule

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // CRON_TZ zones on hosts without a zoneinfo database

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"

	"wtd/engine"
	"wtd/fleet"
	"wtd/hostctl"
)

// DefaultListen is the API's address when the config names none.
const DefaultListen = "127.0.0.1:7070"

// DefaultAPIMaxConnections is the API's cap on open connections when the
// config names none.
const DefaultAPIMaxConnections = 64

// Config is a checked config file.
type Config struct {
	// Path is the config file; relative paths in it resolve against its
	// directory.
	Path        string
	Listen      string
	AllowRemote bool
	// Token is the content of token_file: the bearer token mutating API
	// calls need ("" when none is configured).
	Token     string
	TokenFile string
	// APIMaxConnections caps the API's open connections (the daemon lowers
	// it further to a quarter of its file descriptor limit).
	APIMaxConnections int

	DB        string // "" means wtd run's default
	Mongod    string // "" means wtd run's search
	AllowDirs []string
	// Services are the units mongod.service may restart (wtd run's
	// --allow-service).
	Services []string
	// AllowCommands lets m:command change servers wtd did not start (wtd
	// run's --allow-commands).
	AllowCommands bool
	// SampleInterval is the runs' sampling period (default 1s).
	SampleInterval time.Duration
	// MaxMemory is each run's memory limit in bytes (wtd run
	// --max-memory); 0 means wtd run's default.
	MaxMemory int64
	Schedules []Schedule
	Windows   []Window
	// Results is the central results store runs are pushed to when they
	// end (results: in the config); a zero URI means none.
	Results fleet.Config
}

// Schedule runs a playbook at the times its cron spec gives.
type Schedule struct {
	Name     string
	Cron     string
	Spec     cron.Schedule `json:"-"`
	Playbook string        // absolute
	// Params are the playbook's parameters as given; Overrides the same as
	// wtd run's -p strings.
	Params    map[string]any
	Overrides map[string]string
	Timeout   time.Duration // 0: none
	CatchUp   time.Duration // 0: no catch-up
	Line      int           // where it is defined
}

// Window opens at its cron times for Duration: Open is applied to Server
// at the start, Close at the end.
type Window struct {
	Name      string
	Cron      string
	Spec      cron.Schedule `json:"-"`
	Duration  time.Duration
	Server    string
	Open      []Param
	Close     []Param
	LeaveOpen bool
	Line      int
}

// Param is one setParameter name and value.
type Param struct {
	Name  string
	Value any // int64, float64, bool or string
}

// cronParser reads robfig/cron's standard five fields, descriptors
// (@daily, @every 10m) and a CRON_TZ=Area/City prefix.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses a cron spec as the config file takes it.
func ParseCron(spec string) (cron.Schedule, error) {
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", spec, err)
	}
	return s, nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// LoadConfig reads and checks the config file at path.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(abs, b)
}

// ParseConfig checks the config text of the file at path (absolute).
func ParseConfig(path string, text []byte) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	cfg := Config{Path: path, Listen: DefaultListen, APIMaxConnections: DefaultAPIMaxConnections, SampleInterval: time.Second}
	if len(doc.Content) == 0 {
		return cfg, nil
	}
	top, err := node{path, doc.Content[0]}.fields("the config", "listen", "allow_remote", "token_file", "api_max_connections", "db", "mongod",
		"allow_dirs", "services", "allow_commands", "sample_interval", "max_memory", "schedules", "windows", "results")
	if err != nil {
		return Config{}, err
	}
	if err := cfg.readTop(top); err != nil {
		return Config{}, err
	}
	if err := readList(top, "schedules", cfg.readSchedule, &cfg.Schedules); err != nil {
		return Config{}, err
	}
	if err := readList(top, "windows", cfg.readWindow, &cfg.Windows); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// readList reads the list under key, each entry with read, into dst.
func readList[T any](top map[string]node, key string, read func(node) (T, error), dst *[]T) error {
	n, ok := top[key]
	if !ok {
		return nil
	}
	list, err := n.items(key)
	if err != nil {
		return err
	}
	for _, item := range list {
		v, err := read(item)
		if err != nil {
			return err
		}
		*dst = append(*dst, v)
	}
	return nil
}

// resolve makes a path from the config absolute against its directory.
func (c *Config) resolve(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(c.Path), p)
}

func (c *Config) readTop(top map[string]node) error {
	var err error
	if n, ok := top["allow_remote"]; ok {
		if c.AllowRemote, err = n.boolean("allow_remote"); err != nil {
			return err
		}
	}
	if n, ok := top["allow_commands"]; ok {
		if c.AllowCommands, err = n.boolean("allow_commands"); err != nil {
			return err
		}
	}
	if n, ok := top["listen"]; ok {
		if c.Listen, err = n.str("listen"); err != nil {
			return err
		}
	}
	if n, ok := top["token_file"]; ok {
		if c.TokenFile, err = n.str("token_file"); err != nil {
			return err
		}
		c.TokenFile = c.resolve(c.TokenFile)
		if c.Token, err = readToken(c.TokenFile); err != nil {
			return n.errf("token_file: %v", err)
		}
	}
	if err := c.checkListen(top["listen"]); err != nil {
		return err
	}
	if n, ok := top["api_max_connections"]; ok {
		if c.APIMaxConnections, err = n.integer("api_max_connections", 1); err != nil {
			return err
		}
	}
	for _, k := range []struct {
		key string
		dst *string
	}{{"db", &c.DB}, {"mongod", &c.Mongod}} {
		if n, ok := top[k.key]; ok {
			s, err := n.str(k.key)
			if err != nil {
				return err
			}
			*k.dst = c.resolve(s)
		}
	}
	if n, ok := top["allow_dirs"]; ok {
		list, err := n.items("allow_dirs")
		if err != nil {
			return err
		}
		for _, item := range list {
			s, err := item.str("allow_dirs entry")
			if err != nil {
				return err
			}
			dir := c.resolve(s)
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return item.errf("allow_dirs: %s is not a directory", dir)
			}
			c.AllowDirs = append(c.AllowDirs, dir)
		}
	}
	if n, ok := top["services"]; ok {
		list, err := n.items("services")
		if err != nil {
			return err
		}
		for _, item := range list {
			s, err := item.str("services entry")
			if err != nil {
				return err
			}
			if s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, " /\n") {
				return item.errf("services: %q is not a unit name", s)
			}
			c.Services = append(c.Services, s)
		}
	}
	if n, ok := top["sample_interval"]; ok {
		if c.SampleInterval, err = n.duration("sample_interval", 0); err != nil {
			return err
		}
	}
	if n, ok := top["results"]; ok {
		if err := c.readResults(n); err != nil {
			return err
		}
	}
	if n, ok := top["max_memory"]; ok {
		s, err := n.str("max_memory")
		if err != nil {
			return err
		}
		if c.MaxMemory, err = engine.ParseBytes(s); err != nil {
			return n.errf("max_memory: %v", err)
		}
	}
	return nil
}

// readResults reads results: { uri, database, token_file }. The URI is
// where runs are pushed, not a server they tune: unlike window servers it
// may name other hosts (fleet.CheckURI), and it is never quoted with its
// password.
func (c *Config) readResults(n node) error {
	f, err := n.fields("results", "uri", "database", "token_file")
	if err != nil {
		return err
	}
	u, ok := f["uri"]
	if !ok {
		return n.errf("results: uri is required")
	}
	if c.Results.URI, err = u.str("results uri"); err != nil {
		return err
	}
	if err := fleet.CheckURI(c.Results.URI); err != nil {
		return u.errf("%v", err)
	}
	if d, ok := f["database"]; ok {
		if c.Results.Database, err = d.str("results database"); err != nil {
			return err
		}
		if c.Results.Database == "" || strings.ContainsAny(c.Results.Database, "/\\. \"$") {
			return d.errf("results database %q is not a database name", c.Results.Database)
		}
	}
	if tf, ok := f["token_file"]; ok {
		path, err := tf.str("results token_file")
		if err != nil {
			return err
		}
		c.Results.TokenFile = c.resolve(path)
		if err := c.Results.Check(); err != nil {
			return tf.errf("%v", err)
		}
	}
	return nil
}

// checkListen refuses a non-loopback address without allow_remote, and
// one without a token_file (mutating calls would be open to the network).
func (c *Config) checkListen(at node) error {
	host, _, err := net.SplitHostPort(c.Listen)
	errf := func(format string, args ...any) error {
		if at.n != nil {
			return at.errf(format, args...)
		}
		return fmt.Errorf(format, args...)
	}
	if err != nil {
		return errf("listen %q: want host:port, e.g. %s", c.Listen, DefaultListen)
	}
	if hostctl.CheckLoopback(host) == nil {
		return nil
	}
	if !c.AllowRemote {
		return errf("listen %s is not a loopback address: set allow_remote: true to serve the API beyond this host", c.Listen)
	}
	if c.Token == "" {
		return errf("listen %s is beyond loopback: token_file is required, so that mutating calls need a bearer token", c.Listen)
	}
	return nil
}

func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return tok, nil
}

// name reads and checks an entry's name, unique among seen.
func readName(f map[string]node, item node, what string, seen func(string) bool) (string, error) {
	n, ok := f["name"]
	if !ok {
		return "", item.errf("%s: name is required", what)
	}
	name, err := n.str(what + " name")
	if err != nil {
		return "", err
	}
	if !namePattern.MatchString(name) {
		return "", n.errf("%s name %q: use letters, digits, '.', '_' and '-'", what, name)
	}
	if seen(name) {
		return "", n.errf("%s %q is defined twice", what, name)
	}
	return name, nil
}

func readCron(f map[string]node, item node, what string) (string, cron.Schedule, error) {
	n, ok := f["cron"]
	if !ok {
		return "", nil, item.errf("%s: cron is required", what)
	}
	spec, err := n.str(what + " cron")
	if err != nil {
		return "", nil, err
	}
	s, err := ParseCron(spec)
	if err != nil {
		return "", nil, n.errf("%s: %v", what, err)
	}
	return spec, s, nil
}

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/store"
	"wtd/hostctl"
)

// What m:command may send to a server wtd did not start (mongod.connect,
// mongod.service): the commands that only read, unless the operator
// allowed the others (Config.AllowCommands), which are then recorded as
// changes wtd cannot put back. A server wtd started takes anything: it is
// stopped at the end of the run.

// ErrCommandRefused is returned by PlaybookCommand for a command that
// would change a server wtd did not start, when the operator did not allow
// such commands.
var ErrCommandRefused = errors.New("refused")

// readOnlyCommands are the commands that only read, by the names mongod
// looks them up by: the first key of the command document, case-sensitive
// (the lower-case spellings are mongod's own aliases). A name not here is
// refused, whatever it does. aggregate, explain and profile are read-only
// only in some forms (see commandWrites).
var readOnlyCommands = map[string]bool{
	"aggregate":         true,
	"buildInfo":         true,
	"buildinfo":         true,
	"collStats":         true,
	"collstats":         true,
	"connectionStatus":  true,
	"count":             true,
	"currentOp":         true,
	"dataSize":          true,
	"datasize":          true,
	"dbStats":           true,
	"dbstats":           true,
	"distinct":          true,
	"explain":           true,
	"find":              true,
	"getCmdLineOpts":    true,
	"getDiagnosticData": true,
	"getLog":            true,
	"getMore":           true,
	"getParameter":      true,
	"hello":             true,
	"hostInfo":          true,
	"isMaster":          true,
	"ismaster":          true,
	"killCursors":       true,
	"listCollections":   true,
	"listCommands":      true,
	"listDatabases":     true,
	"listIndexes":       true,
	"lockInfo":          true,
	"ping":              true,
	"profile":           true,
	"replSetGetConfig":  true,
	"replSetGetStatus":  true,
	"serverStatus":      true,
	"top":               true,
	"whatsmyuri":        true,
}

// explainable are the commands explain may wrap on a server wtd did not
// start. mongod's explain plans the command and, with executionStats or
// allPlansExecution, runs the plan without applying its writes: an
// explained update, delete or findAndModify changes nothing.
var explainable = map[string]bool{
	"find": true, "count": true, "distinct": true, "aggregate": true,
	"update": true, "delete": true, "findAndModify": true, "findandmodify": true,
}

// writingStages are the aggregation stages that write a collection.
var writingStages = []string{"$out", "$merge"}

// commandWrites says how cmd may change the server it runs on, "" when it
// only reads: its name (the first key) must be one of readOnlyCommands;
// an aggregate (also one explain wraps) must have no $out or $merge stage
// anywhere, nested pipelines ($lookup, $facet, $unionWith) included;
// explain must wrap one of explainable; profile must be level -1 (read the
// settings) with nothing to set (slowms, sampleRate, filter).
func commandWrites(cmd bson.D) string {
	if len(cmd) == 0 {
		return "an empty command document names no command"
	}
	name := cmd[0].Key
	if !readOnlyCommands[name] {
		return fmt.Sprintf("%s is not one of the commands that only read", name)
	}
	switch name {
	case "aggregate":
		if stage := writingStage(cmd); stage != "" {
			return fmt.Sprintf("an aggregate with a %s stage writes a collection", stage)
		}
	case "explain":
		inner, ok := cmd[0].Value.(bson.D)
		if !ok || len(inner) == 0 {
			return "explain wraps no command document"
		}
		if !explainable[inner[0].Key] {
			return fmt.Sprintf("explain of %s: explain may wrap only %s", inner[0].Key, strings.Join(sortedNames(explainable), ", "))
		}
		if stage := writingStage(inner); stage != "" {
			return fmt.Sprintf("explain of an aggregate with a %s stage", stage)
		}
	case "profile":
		if !profileReads(cmd) {
			return fmt.Sprintf("profile %v changes the profiler (only { profile = -1 }, which reads its settings, leaves it as it is)", cmd[0].Value)
		}
	}
	return ""
}

// profileReads reports whether a profile command only reads the profiler's
// settings: level -1 as a number and nothing else to set.
func profileReads(cmd bson.D) bool {
	level, ok := wholeNumber(cmd[0].Value)
	if !ok || level != -1 {
		return false
	}
	for _, e := range cmd[1:] {
		if e.Key != "comment" {
			return false
		}
	}
	return true
}

func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

// writingStage returns the first key $out or $merge found at any depth of
// v, "" when there is none.
func writingStage(v any) string {
	switch x := v.(type) {
	case bson.D:
		for _, e := range x {
			for _, w := range writingStages {
				if e.Key == w {
					return w
				}
			}
			if s := writingStage(e.Value); s != "" {
				return s
			}
		}
	case bson.M:
		for k, e := range x {
			for _, w := range writingStages {
				if k == w {
					return w
				}
			}
			if s := writingStage(e); s != "" {
				return s
			}
		}
	case bson.A:
		for _, e := range x {
			if s := writingStage(e); s != "" {
				return s
			}
		}
	case []any:
		return writingStage(bson.A(x))
	case map[string]any:
		return writingStage(bson.M(x))
	}
	return ""
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// insteadOf names the method that makes the change cmd makes in a way wtd
// puts back, "" when there is none.
func insteadOf(cmd bson.D) string {
	switch cmd[0].Key {
	case "setParameter":
		for _, e := range cmd[1:] {
			if e.Key == "wiredTigerEngineRuntimeConfig" {
				return "use m:reconfigure(config), which works out the values before and sets them back at the end of the run"
			}
		}
		return "use m:set_parameter(name, value), which reads the value before and sets it back at the end of the run"
	case "createIndexes":
		return "use m:create_index{ ns = ..., key = ... }, which is recorded and dropped at the end of the run unless keep = true"
	}
	return ""
}

// PlaybookCommand runs cmd, a command the playbook sends (m:command), on
// db. A command the sandbox refuses (hostctl.CheckCommand) is refused
// first, on every server. A server wtd started runs anything else. On one
// it did not start, a
// command that only reads runs (see commandWrites); another is refused
// (ErrCommandRefused) with the method to use instead, unless the operator
// allowed such commands (Config.AllowCommands): then it is recorded first
// as a change that cannot be put back, and run.
func (s *Server) PlaybookCommand(ctx context.Context, db string, cmd bson.D) (bson.Raw, error) {
	if len(cmd) == 0 {
		return nil, errors.New("an empty command document names no command")
	}
	if err := hostctl.CheckCommand(cmd); err != nil {
		return nil, err // before anything is recorded
	}
	if s.Started() {
		return s.CommandDB(ctx, db, cmd)
	}
	why := commandWrites(cmd)
	if why == "" {
		return s.CommandDB(ctx, db, cmd)
	}
	if !s.run.cfg.AllowCommands {
		return nil, s.refusal(cmd, why)
	}
	id, err := s.recordCommand(ctx, db, cmd, why)
	if err != nil {
		return nil, err
	}
	s.run.Eventf("warn", s.Name, "running %s on %s through m:command (allowed by %s): %s, and wtd cannot put back what it does",
		cmd[0].Key, db, s.run.commandsAllowedBy(), why)
	raw, err := s.CommandDB(ctx, db, cmd)
	if err != nil {
		detail := "the server answered with an error (it may have changed nothing): " + redact(err.Error())
		if serr := s.run.cfg.Store.SetChangeState(context.WithoutCancel(ctx), []int64{id}, store.ChangeIrreversible, detail); serr != nil {
			return nil, errors.Join(err, serr)
		}
		return nil, err
	}
	return raw, nil
}

// refusal is the error of a command refused on a server wtd did not start.
func (s *Server) refusal(cmd bson.D, why string) error {
	how := "mongod.connect"
	if s.svc != nil {
		how = "mongod.service"
	}
	instead := ""
	if m := insteadOf(cmd); m != "" {
		instead = "; " + m
	}
	return fmt.Errorf("%w on %s, a server wtd did not start (%s), which it must leave as it found it: %s%s; "+
		"or the operator allows commands that change such servers (wtd run --allow-commands, the daemon config's allow_commands: true), "+
		"each then recorded as a change wtd cannot put back. Without that, m:command runs only %s (aggregate without $out or $merge; explain of %s; profile = -1)",
		ErrCommandRefused, s.Name, how, why, instead, strings.Join(sortedNames(readOnlyCommands), ", "), strings.Join(sortedNames(explainable), ", "))
}

// commandsAllowedBy words who let m:command change servers wtd did not
// start: the flag of wtd run, or the daemon's config.
func (r *Run) commandsAllowedBy() string {
	if r.cfg.Trigger == "" || r.cfg.Trigger == "cli" {
		return "--allow-commands"
	}
	return "the daemon config's allow_commands"
}

// commandChange is the change column of a command m:command ran (kind
// command).
type commandChange struct {
	DB string `json:"db"`
	// Command is the command document as relaxed extended JSON, clipped
	// to maxCommandText bytes.
	Command   string `json:"command"`
	Why       string `json:"why"`
	AllowedBy string `json:"allowed_by"`
}

// maxCommandText bounds the command text a change keeps.
const maxCommandText = 4000

// recordCommand records, before it runs, a command that changes a server
// wtd did not start and cannot be put back.
func (s *Server) recordCommand(ctx context.Context, db string, cmd bson.D, why string) (int64, error) {
	text, err := bson.MarshalExtJSON(cmd, false, false)
	if err != nil {
		text = []byte(fmt.Sprint(cmd))
	}
	cmdText := redact(string(text))
	if len(cmdText) > maxCommandText {
		cmdText = fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(cmdText[:maxCommandText], ""), len(cmdText))
	}
	change, _ := json.Marshal(commandChange{DB: db, Command: cmdText, Why: why, AllowedBy: s.run.commandsAllowedBy()})
	info, _ := json.Marshal(restoreInfo{URI: redact(s.uri)})
	id, err := s.run.cfg.Store.AddChange(ctx, store.Change{RunID: s.run.ID, Server: s.Name, Kind: store.ChangeCommand,
		Target: cmd[0].Key, Change: string(change), Restore: string(info), State: store.ChangeIrreversible})
	if err != nil {
		return 0, fmt.Errorf("record the change before running it: %w", err)
	}
	return id, nil
}

// commandWhat words a command change: "ran createIndexes on test through
// m:command (allowed by --allow-commands)".
func commandWhat(c store.Change) string {
	var cc commandChange
	if err := json.Unmarshal([]byte(c.Change), &cc); err != nil {
		return "ran " + c.Target + " through m:command"
	}
	return fmt.Sprintf("ran %s on %s through m:command (allowed by %s)", c.Target, cc.DB, cc.AllowedBy)
}

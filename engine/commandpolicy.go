package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/cmdpolicy"
	"wtd/engine/record"
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

// PlaybookCommand runs cmd, a command the playbook sends (m:command), on
// db. A command the sandbox refuses (hostctl.CheckCommand) is refused
// first, on every server. A server wtd started runs anything else. On one
// it did not start, a
// command that only reads runs (see cmdpolicy.Writes); another is refused
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
	why := cmdpolicy.Writes(cmd)
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
	if m := cmdpolicy.InsteadOf(cmd); m != "" {
		instead = "; " + m
	}
	return fmt.Errorf("%w on %s, a server wtd did not start (%s), which it must leave as it found it: %s%s; "+
		"or the operator allows commands that change such servers (wtd run --allow-commands, the daemon config's allow_commands: true), "+
		"each then recorded as a change wtd cannot put back. Without that, m:command runs only %s (aggregate without $out or $merge; explain of %s; profile = -1)",
		ErrCommandRefused, s.Name, how, why, instead, strings.Join(cmdpolicy.ReadOnly(), ", "), strings.Join(cmdpolicy.Explainable(), ", "))
}

// commandsAllowedBy words who let m:command change servers wtd did not
// start: the flag of wtd run, or the daemon's config.
func (r *Run) commandsAllowedBy() string {
	if r.cfg.Trigger == "" || r.cfg.Trigger == "cli" {
		return "--allow-commands"
	}
	return "the daemon config's allow_commands"
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
	change, _ := json.Marshal(record.CommandChange{DB: db, Command: cmdText, Why: why, AllowedBy: s.run.commandsAllowedBy()})
	info, _ := json.Marshal(restoreInfo{URI: redact(s.uri)})
	id, err := s.run.cfg.Store.AddChange(ctx, store.Change{RunID: s.run.ID, Server: s.Name, Kind: store.ChangeCommand,
		Target: cmd[0].Key, Change: string(change), Restore: string(info), State: store.ChangeIrreversible})
	if err != nil {
		return 0, fmt.Errorf("record the change before running it: %w", err)
	}
	return id, nil
}

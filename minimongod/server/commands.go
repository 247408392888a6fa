package server

import (
	"sync/atomic"
	"wtd/minimongod/mlog"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// command is one server command: run appends reply elements (everything
// but ok) to dst.
type command struct {
	name         string // its key in commands
	run          func(c *clientConn, req *request, dst []byte) ([]byte, error)
	adminOnly    bool
	counter      func(*counters) *atomic.Int64 // opcounter, default "command"
	latencyClass int
	// testOnly commands exist only with enableTestCommands, as mongod's.
	testOnly bool
}

var commands map[string]command

func init() {
	admin := func(f func(*clientConn, *request, []byte) ([]byte, error)) command {
		return command{run: f, adminOnly: true}
	}
	plain := func(f func(*clientConn, *request, []byte) ([]byte, error)) command { return command{run: f} }
	commands = map[string]command{
		"hello":            plain(cmdHello),
		"isMaster":         plain(cmdHello),
		"ismaster":         plain(cmdHello),
		"ping":             plain(cmdPing),
		"buildInfo":        plain(cmdBuildInfo),
		"buildinfo":        plain(cmdBuildInfo),
		"hostInfo":         plain(cmdHostInfo),
		"getCmdLineOpts":   admin(cmdGetCmdLineOpts),
		"serverStatus":     plain(cmdServerStatus),
		"getParameter":     admin(cmdGetParameter),
		"setParameter":     admin(cmdSetParameter),
		"listDatabases":    admin(cmdListDatabases),
		"listCollections":  plain(cmdListCollections),
		"create":           plain(cmdCreate),
		"drop":             plain(cmdDrop),
		"dropDatabase":     plain(cmdDropDatabase),
		"insert":           {run: cmdInsert, latencyClass: latencyWrites},
		"find":             {run: cmdFind, counter: func(c *counters) *atomic.Int64 { return &c.opQuery }, latencyClass: latencyReads},
		"getMore":          {run: cmdGetMore, counter: func(c *counters) *atomic.Int64 { return &c.opGetMore }, latencyClass: latencyReads},
		"killCursors":      plain(cmdKillCursors),
		"update":           {run: cmdUpdate, latencyClass: latencyWrites},
		"delete":           {run: cmdDelete, latencyClass: latencyWrites},
		"findAndModify":    {run: cmdFindAndModify, latencyClass: latencyWrites},
		"findandmodify":    {run: cmdFindAndModify, latencyClass: latencyWrites},
		"count":            {run: cmdCount, latencyClass: latencyReads},
		"aggregate":        {run: cmdAggregate, latencyClass: latencyReads},
		"createIndexes":    plain(cmdCreateIndexes),
		"listIndexes":      plain(cmdListIndexes),
		"dropIndexes":      plain(cmdDropIndexes),
		"deleteIndexes":    plain(cmdDropIndexes),
		"collStats":        {run: cmdCollStats, latencyClass: latencyReads},
		"dbStats":          {run: cmdDBStats, latencyClass: latencyReads},
		"endSessions":      plain(cmdOK),
		"killSessions":     plain(cmdOK),
		"shutdown":         admin(cmdShutdown),
		"whatsmyuri":       plain(cmdWhatsMyURI),
		"connectionStatus": plain(cmdConnectionStatus),
		"getLog":           admin(cmdGetLog),
		"listCommands":     plain(cmdListCommands),
		"currentOp":        admin(cmdCurrentOp),
		"killOp":           admin(cmdKillOp),
		"collMod":          plain(cmdCollMod),
		"explain":          {run: cmdExplain, latencyClass: latencyReads},
		"profile":          plain(cmdProfile),
		"distinct":         {run: cmdDistinct, latencyClass: latencyReads},
		"renameCollection": admin(cmdRenameCollection),
		"validate":         plain(cmdValidate),

		"replSetGetStatus":  admin(cmdNoReplication),
		"replSetGetConfig":  admin(cmdNoReplication),
		"replSetInitiate":   admin(cmdNoReplication),
		"commitTransaction": admin(cmdNoTransaction),
		"abortTransaction":  admin(cmdNoTransaction),

		"configureFailPoint": {run: cmdConfigureFailPoint, adminOnly: true, testOnly: true},
	}
	for name, cmd := range commands {
		cmd.name = name
		commands[name] = cmd
	}
}

func cmdOK(c *clientConn, req *request, dst []byte) ([]byte, error) { return dst, nil }

func cmdPing(c *clientConn, req *request, dst []byte) ([]byte, error) { return dst, nil }

func cmdListCommands(c *clientConn, req *request, dst []byte) ([]byte, error) {
	idx, dst := bsoncore.AppendDocumentElementStart(dst, "commands")
	for _, name := range sortedKeys(commands) {
		sub, d := bsoncore.AppendDocumentElementStart(dst, name)
		d = bsoncore.AppendBooleanElement(d, "adminOnly", commands[name].adminOnly)
		dst, _ = bsoncore.AppendDocumentEnd(d, sub)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst, nil
}

func cmdWhatsMyURI(c *clientConn, req *request, dst []byte) ([]byte, error) {
	return bsoncore.AppendStringElement(dst, "you", c.remote), nil
}

func cmdConnectionStatus(c *clientConn, req *request, dst []byte) ([]byte, error) {
	idx, d := bsoncore.AppendDocumentElementStart(dst, "authInfo")
	a, d := bsoncore.AppendArrayElementStart(d, "authenticatedUsers")
	d, _ = bsoncore.AppendArrayEnd(d, a)
	a, d = bsoncore.AppendArrayElementStart(d, "authenticatedUserRoles")
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return bsoncore.AppendDocumentEnd(d, idx)
}

func cmdGetLog(c *clientConn, req *request, dst []byte) ([]byte, error) {
	a, d := bsoncore.AppendArrayElementStart(dst, "log")
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return bsoncore.AppendInt32Element(d, "totalLinesWritten", 0), nil
}

// cmdShutdown starts a clean shutdown. As mongod, it closes the connection
// instead of replying.
func cmdShutdown(c *clientConn, req *request, dst []byte) ([]byte, error) {
	c.s.log.Info("COMMAND", 4695400, c.ctxName(), "Terminating via shutdown command", mlog.A("force", false))
	c.s.requestShutdown()
	return dst, errCloseConnection
}

package server

import (
	"fmt"
	"runtime/debug"

	"wtd/minimongod/mlog"
	"wtd/minimongod/mongoerr"
)

// runCommand runs cmd for req, turning a panic into an InternalError reply
// so that one bad request never takes the process down: the stack is
// logged at error level, an open transaction is rolled back and the
// locks taken with defer are released as the panic unwinds.
func (c *clientConn) runCommand(cmd command, req *request, dst []byte) (out []byte, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if c.sess.WT().InTransaction() {
			c.sess.Rollback()
		}
		msg := fmt.Sprint(r)
		c.s.log.Error("COMMAND", 4938400, c.ctxName(), "Uncaught panic while running a command",
			mlog.A("command", req.name), mlog.A("error", msg), mlog.A("stack", string(debug.Stack())))
		c.s.stats.commandFailed.Add(1)
		out, err = nil, mongoerr.New(mongoerr.CodeInternalError, "%s", msg)
	}()
	c.s.failpoints.maybePanic(req.name)
	return cmd.run(c, req, dst)
}

package server

import (
	"os"
	"sync"

	"wtd/minimongod/mlog"
	"wtd/minimongod/wt"
)

// ExitAbrupt is mongod's exit code after a fatal assertion.
const ExitAbrupt = 14

// engineFailure remembers the last error WiredTiger reported, the cause
// of a later panic (ENOSPC while writing the journal, say).
type engineFailure struct {
	mu        sync.Mutex
	lastCode  int
	lastMsg   string
	exitingMu sync.Mutex
}

// onEngineError notes WiredTiger's errors; on WT_PANIC it does what mongod
// does: logs the fatal error with its cause and exits. WiredTiger cannot
// go on after a panic, so a server that stayed up would fail every read
// and write while still answering ping.
func (s *Server) onEngineError(code int, msg string) {
	f := &s.engineFailure
	if code != wt.CodePanic {
		f.mu.Lock()
		f.lastCode, f.lastMsg = code, msg
		f.mu.Unlock()
		return
	}
	f.exitingMu.Lock() // the first panicking thread exits; others wait
	f.mu.Lock()
	cause, causeCode := f.lastMsg, f.lastCode
	f.mu.Unlock()
	attrs := []mlog.Attr{mlog.A("message", msg), mlog.A("cause", cause)}
	if causeCode != 0 {
		attrs = append(attrs, mlog.A("causeCode", causeCode), mlog.A("causeText", wt.ErrorText(causeCode)))
	}
	s.log.Fatal("STORAGE", 28558, "WTError", "WiredTiger panicked: the process must exit and restart", attrs...)
	s.log.Fatal("ASSERT", 23089, "WTError", "Fatal assertion", mlog.A("msgid", 28558), mlog.A("file", "wiredtiger_util.cpp"))
	s.log.Info("CONTROL", 23138, "WTError", "Shutting down", mlog.A("exitCode", ExitAbrupt))
	s.log.Close()
	os.Exit(ExitAbrupt)
}

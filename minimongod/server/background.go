package server

import (
	"time"

	"wtd/minimongod/mlog"
)

// startBackground starts the idle-cursor reaper, the checkpoint thread
// (every syncdelay seconds),
// the journal flusher (every journalCommitInterval ms), the TTL monitor,
// the ticket concurrency adjustment and the diagnostic data capture, as
// mongod runs them. shutdown joins
// them through bgStop and bgDone.
func (s *Server) startBackground() {
	s.bgDone.Add(7)
	go s.ftdcLoop()
	go s.memoryLoop()
	go s.cursorLoop()
	go s.checkpointLoop()
	go s.journalLoop()
	go s.ttlLoop()
	go func() {
		defer s.bgDone.Done()
		s.exec.adjustLoop(s.bgStop)
	}()
}

func (s *Server) checkpointLoop() {
	defer s.bgDone.Done()
	ws, err := s.conn.OpenSession("")
	if err != nil {
		s.log.Error("STORAGE", 22430, "Checkpointer", "cannot open checkpoint session", mlog.A("error", err.Error()))
		return
	}
	defer ws.Close()
	last := time.Now()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.bgStop:
			return
		case <-t.C:
		}
		delay := s.params.syncDelay()
		if delay <= 0 || time.Since(last) < time.Duration(delay*float64(time.Second)) {
			continue
		}
		start := time.Now()
		if err := s.eng.Checkpoint(ws); err != nil {
			s.log.Error("STORAGE", 22430, "Checkpointer", "checkpoint failed", mlog.A("error", err.Error()))
		} else {
			s.stats.checkpoints.Add(1)
			s.stats.lastCheckpointMillis.Store(time.Since(start).Milliseconds())
		}
		last = time.Now()
	}
}

func (s *Server) journalLoop() {
	defer s.bgDone.Done()
	ws, err := s.conn.OpenSession("")
	if err != nil {
		s.log.Error("STORAGE", 22430, "JournalFlusher", "cannot open journal session", mlog.A("error", err.Error()))
		return
	}
	defer ws.Close()
	for {
		interval := time.Duration(s.params.journalCommitInterval()) * time.Millisecond
		select {
		case <-s.bgStop:
			ws.LogFlush(true)
			return
		case <-time.After(interval):
		}
		if err := ws.LogFlush(true); err != nil {
			s.log.Error("STORAGE", 22430, "JournalFlusher", "journal flush failed", mlog.A("error", err.Error()))
		}
	}
}

// cursorLoop closes cursors idle longer than cursorTimeoutMillis, as
// mongod's client cursor monitor does (every 4 s, or more often for short
// timeouts).
func (s *Server) cursorLoop() {
	defer s.bgDone.Done()
	for {
		timeout := time.Duration(s.params.cursorTimeout()) * time.Millisecond
		every := min(4*time.Second, max(timeout/4, 50*time.Millisecond))
		select {
		case <-s.bgStop:
			return
		case <-time.After(every):
		}
		if n := s.cursors.expire(timeout); n > 0 {
			s.stats.cursorsTimedOut.Add(int64(n))
			s.log.Info("QUERY", 20529, "clientcursormon", "Cursors timed out", mlog.A("numTimedOut", n))
		}
	}
}

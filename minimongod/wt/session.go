package wt

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// Session is a WiredTiger session (WT_SESSION) with a cache of open cursors.
type Session struct {
	s       *C.WT_SESSION
	cursors map[cursorKey]*Cursor
	errbuf  [512]byte
	inTxn   bool
}

func (s *Session) eb() (*C.char, C.size_t) {
	s.errbuf[0] = 0
	return (*C.char)(unsafe.Pointer(&s.errbuf[0])), C.size_t(len(s.errbuf))
}

// Close closes the session and its cursors.
func (s *Session) Close() error {
	s.cursors = nil
	return check("WT_SESSION.close", C.wtd_session_close(s.s))
}

// Create creates a table or index object.
func (s *Session) Create(uri, config string) error {
	u, cfg := cstr(uri), cstr(config)
	defer free(u)
	defer free(cfg)
	b, n := s.eb()
	return checkMsg("WT_SESSION.create "+uri, C.wtd_session_create(s.s, u, cfg, b, n), s.errbuf[:])
}

// Drop drops an object. Cached cursors on it in this session are closed
// first; cursors in other sessions make it fail with EBUSY (see IsBusy).
func (s *Session) Drop(uri, config string) error {
	s.CloseCursors(uri)
	u, cfg := cstr(uri), cstr(config)
	defer free(u)
	defer free(cfg)
	b, n := s.eb()
	return checkMsg("WT_SESSION.drop "+uri, C.wtd_session_drop(s.s, u, cfg, b, n), s.errbuf[:])
}

// Verify checks an object's on-disk structure (WT_SESSION::verify). It
// fails with EBUSY while any cursor is open on it.
func (s *Session) Verify(uri string) error {
	s.CloseCursors(uri)
	u := cstr(uri)
	defer free(u)
	b, n := s.eb()
	return checkMsg("WT_SESSION.verify "+uri, C.wtd_session_verify(s.s, u, b, n), s.errbuf[:])
}

// Begin starts a transaction.
func (s *Session) Begin() error {
	if err := check("WT_SESSION.begin_transaction", C.wtd_session_begin(s.s, nil)); err != nil {
		return err
	}
	s.inTxn = true
	return nil
}

// Commit commits the transaction; sync makes it wait for the journal.
func (s *Session) Commit(sync bool) error {
	s.inTxn = false
	var cfg *C.char
	if sync {
		cfg = cstr("sync=on")
		defer free(cfg)
	}
	return check("WT_SESSION.commit_transaction", C.wtd_session_commit(s.s, cfg))
}

// Rollback rolls the transaction back.
func (s *Session) Rollback() error {
	s.inTxn = false
	return check("WT_SESSION.rollback_transaction", C.wtd_session_rollback(s.s, nil))
}

// InTransaction reports whether Begin was called without Commit or Rollback.
func (s *Session) InTransaction() bool { return s.inTxn }

// Checkpoint writes a checkpoint of every table.
func (s *Session) Checkpoint(config string) error {
	var cfg *C.char
	if config != "" {
		cfg = cstr(config)
		defer free(cfg)
	}
	return check("WT_SESSION.checkpoint", C.wtd_session_checkpoint(s.s, cfg))
}

// LogFlush flushes the journal; with sync it waits until it is on disk.
func (s *Session) LogFlush(sync bool) error {
	cfg := cstr("sync=off")
	if sync {
		free(cfg)
		cfg = cstr("sync=on")
	}
	defer free(cfg)
	return check("WT_SESSION.log_flush", C.wtd_session_log_flush(s.s, cfg))
}

// cursorKey names a cached cursor.
type cursorKey struct {
	uri       string
	overwrite bool
}

// Cursor returns this session's cached cursor on uri, opening it on first
// use. overwrite=false cursors fail inserts of existing keys with a
// duplicate-key error. The cursor is reset before it is returned (when it
// holds a position: a reset of an unpositioned cursor does nothing).
func (s *Session) Cursor(uri string, overwrite bool) (*Cursor, error) {
	key := cursorKey{uri, overwrite}
	if c, ok := s.cursors[key]; ok {
		if c.positioned {
			if err := c.Reset(); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	cfg := ""
	if !overwrite {
		cfg = "overwrite=false"
	}
	c, err := s.OpenCursor(uri, cfg)
	if err != nil {
		return nil, err
	}
	s.cursors[key] = c
	return c, nil
}

// CloseCursors closes this session's cached cursors on uri.
func (s *Session) CloseCursors(uri string) {
	for _, key := range [...]cursorKey{{uri, true}, {uri, false}} {
		if c, ok := s.cursors[key]; ok {
			delete(s.cursors, key)
			c.Close()
		}
	}
}

// CloseAllCursors closes every cached cursor of the session.
func (s *Session) CloseAllCursors() {
	for key, c := range s.cursors {
		delete(s.cursors, key)
		c.Close()
	}
}

// OpenCursor opens an uncached cursor; the caller closes it.
func (s *Session) OpenCursor(uri, config string) (*Cursor, error) {
	u := cstr(uri)
	defer free(u)
	var cfg *C.char
	if config != "" {
		cfg = cstr(config)
		defer free(cfg)
	}
	var c *C.WT_CURSOR
	b, n := s.eb()
	if err := checkMsg("WT_SESSION.open_cursor "+uri, C.wtd_open_cursor(s.s, u, cfg, &c, b, n), s.errbuf[:]); err != nil {
		return nil, err
	}
	return &Cursor{c: c}, nil
}

// Stat is one statistics entry: WiredTiger's description ("cache: bytes
// currently in the cache") and its value.
type Stat struct {
	Desc  string
	Value int64
}

// Stats reads a statistics cursor ("statistics:" for the connection,
// "statistics:table:x" for one table) in one call.
func (s *Session) Stats(uri string) ([]Stat, error) {
	u := cstr(uri)
	defer free(u)
	buf := make([]byte, 64<<10)
	for {
		var e C.int
		n := int64(C.wtd_stats_dump(s.s, u, (*C.char)(unsafe.Pointer(&buf[0])), C.int64_t(len(buf)), &e))
		if e != 0 {
			return nil, check("statistics cursor "+uri, e)
		}
		if n < 0 {
			buf = make([]byte, -n)
			continue
		}
		return parseStats(buf[:n]), nil
	}
}

func parseStats(b []byte) []Stat {
	var out []Stat
	for len(b) >= 10 {
		v := int64(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
		l := int(b[8]) | int(b[9])<<8
		out = append(out, Stat{Desc: string(b[10 : 10+l]), Value: v})
		b = b[10+l:]
	}
	return out
}

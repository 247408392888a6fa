package wt

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// Conn is an open WiredTiger database (WT_CONNECTION). It is safe for
// concurrent use; sessions are not.
type Conn struct {
	c *C.WT_CONNECTION
}

// Open opens (or with "create" in config, creates) the database in home.
func Open(home, config string) (*Conn, error) {
	h, cfg := cstr(home), cstr(config)
	defer free(h)
	defer free(cfg)
	var c *C.WT_CONNECTION
	errbuf := make([]byte, 1024)
	r := C.wtd_open(h, cfg, &c, (*C.char)(unsafe.Pointer(&errbuf[0])), C.size_t(len(errbuf)))
	if err := checkMsg("wiredtiger_open", r, errbuf); err != nil {
		return nil, err
	}
	return &Conn{c: c}, nil
}

// Close closes the database; open sessions and cursors are closed with it.
func (c *Conn) Close(config string) error {
	var cfg *C.char
	if config != "" {
		cfg = cstr(config)
		defer free(cfg)
	}
	return check("WT_CONNECTION.close", C.wtd_conn_close(c.c, cfg))
}

// Reconfigure changes runtime settings (WT_CONNECTION::reconfigure). The
// error carries WiredTiger's message. Keys that would crash WiredTiger
// 3.2.1 when changed at runtime (operation_tracking) are refused with
// EINVAL before WiredTiger sees them.
func (c *Conn) Reconfigure(config string) error {
	if err := checkRuntimeConfig(config); err != nil {
		return err
	}
	cfg := cstr(config)
	defer free(cfg)
	errbuf := make([]byte, 1024)
	r := C.wtd_conn_reconfigure(c.c, cfg, (*C.char)(unsafe.Pointer(&errbuf[0])), C.size_t(len(errbuf)))
	return checkMsg("WT_CONNECTION.reconfigure", r, errbuf)
}

// OpenSession opens a session. A session and its cursors must be used by one
// goroutine at a time.
func (c *Conn) OpenSession(config string) (*Session, error) {
	var cfg *C.char
	if config != "" {
		cfg = cstr(config)
		defer free(cfg)
	}
	var s *C.WT_SESSION
	if err := check("WT_CONNECTION.open_session", C.wtd_open_session(c.c, cfg, &s)); err != nil {
		return nil, err
	}
	return &Session{s: s, cursors: map[cursorKey]*Cursor{}}, nil
}

// Package wtparse reads WiredTiger configuration strings with WiredTiger's
// own parser (wiredtiger_config_parser_open, cgo), so that tests can hold
// hostctl's reading of them to the library's.
package wtparse

/*
#cgo LDFLAGS: -lwiredtiger
#include <stdlib.h>
#include <wiredtiger.h>

static int wtparse_silent(WT_EVENT_HANDLER *h, WT_SESSION *s, int e, const char *m) { return 0; }
static int wtparse_silent_msg(WT_EVENT_HANDLER *h, WT_SESSION *s, const char *m) { return 0; }
static WT_EVENT_HANDLER wtparse_handler = {wtparse_silent, wtparse_silent_msg, NULL, NULL};

// wtparse_open opens an in-memory database whose messages are dropped, for
// a session to parse with.
static int wtparse_open(const char *home, WT_CONNECTION **connp, WT_SESSION **sessp) {
	int r = wiredtiger_open(home, &wtparse_handler, "create,in_memory", connp);
	if (r != 0)
		return r;
	return (*connp)->open_session(*connp, NULL, NULL, sessp);
}

static int wtparse_parser(WT_SESSION *s, const char *cfg, size_t len, WT_CONFIG_PARSER **p) {
	return wiredtiger_config_parser_open(s, cfg, len, p);
}

static int wtparse_next(WT_CONFIG_PARSER *p, WT_CONFIG_ITEM *k, WT_CONFIG_ITEM *v) {
	return p->next(p, k, v);
}

static void wtparse_close(WT_CONFIG_PARSER *p) { p->close(p); }

static void wtparse_conn_close(WT_CONNECTION *c) { c->close(c, NULL); }
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// Parser reads configuration strings with WiredTiger. It is safe for use
// by one goroutine at a time.
type Parser struct {
	mu   sync.Mutex
	conn *C.WT_CONNECTION
	sess *C.WT_SESSION
}

// Open opens a parser whose in-memory database lives in home (an empty
// directory).
func Open(home string) (*Parser, error) {
	h := C.CString(home)
	defer C.free(unsafe.Pointer(h))
	var p Parser
	if r := C.wtparse_open(h, &p.conn, &p.sess); r != 0 {
		return nil, fmt.Errorf("wiredtiger_open: %s", C.GoString(C.wiredtiger_strerror(r)))
	}
	return &p, nil
}

// Close closes the database.
func (p *Parser) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		C.wtparse_conn_close(p.conn)
		p.conn = nil
	}
}

// ErrSyntax is a string WiredTiger's parser stops at.
var ErrSyntax = errors.New("WiredTiger cannot parse the string")

// Split returns the top-level keys and values of cfg as WiredTiger's
// parser returns them: keys without their quotes, values as written
// (quoted ones with their quotes, nested ones with their brackets, "" for
// a key without a value).
func (p *Parser) Split(cfg string) ([][2]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	buf := C.CBytes(append([]byte(cfg), 0))
	defer C.free(buf)
	var cp *C.WT_CONFIG_PARSER
	if r := C.wtparse_parser(p.sess, (*C.char)(buf), C.size_t(len(cfg)), &cp); r != 0 {
		return nil, fmt.Errorf("wiredtiger_config_parser_open: %s", C.GoString(C.wiredtiger_strerror(r)))
	}
	defer C.wtparse_close(cp)
	out := [][2]string{}
	for {
		var k, v C.WT_CONFIG_ITEM
		switch r := C.wtparse_next(cp, &k, &v); r {
		case 0:
		case C.WT_NOTFOUND:
			return out, nil
		default:
			return nil, ErrSyntax
		}
		value := C.GoStringN(v.str, C.int(v.len))
		if v._type == C.WT_CONFIG_ITEM_STRING {
			value = `"` + value + `"`
		}
		out = append(out, [2]string{C.GoStringN(k.str, C.int(k.len)), value})
	}
}

// Package wt is minimongod's binding to the WiredTiger library (cgo): a
// connection, sessions, raw-byte cursors and statistics. Each Session and its
// cursors belong to one goroutine at a time, as WiredTiger requires.
package wt

/*
#cgo LDFLAGS: -lwiredtiger
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// WiredTiger's own return codes.
const (
	codeRollback     = -31800
	codeDuplicateKey = -31801
	codeNotFound     = -31803
	// CodePanic is WT_PANIC: the library cannot go on and the process
	// must exit.
	CodePanic = -31804
	codeBusy  = 16 // EBUSY
)

// Error is a failed WiredTiger call: the operation, its return code and, when
// WiredTiger reported one, its message.
type Error struct {
	Op      string
	Code    int
	Message string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Op, C.GoString(C.wtd_strerror(C.int(e.Code))))
}

// ErrNotFound is returned by cursor operations on a missing key.
var ErrNotFound = errors.New("wiredtiger: not found")

// IsDuplicateKey reports whether err is WT_DUPLICATE_KEY.
func IsDuplicateKey(err error) bool { return codeOf(err) == codeDuplicateKey }

// IsRollback reports whether err is WT_ROLLBACK (a write conflict).
func IsRollback(err error) bool { return codeOf(err) == codeRollback }

// IsBusy reports whether err is EBUSY (a table still in use).
func IsBusy(err error) bool { return codeOf(err) == codeBusy }

func codeOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func check(op string, r C.int) error {
	switch r {
	case 0:
		return nil
	case codeNotFound:
		return ErrNotFound
	}
	return &Error{Op: op, Code: int(r)}
}

func checkMsg(op string, r C.int, buf []byte) error {
	if r == 0 {
		return nil
	}
	if r == codeNotFound {
		return ErrNotFound
	}
	msg := C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
	return &Error{Op: op, Code: int(r), Message: msg}
}

// ErrorText returns WiredTiger's text for a return code or errno
// ("No space left on device" for ENOSPC).
func ErrorText(code int) string { return C.GoString(C.wtd_strerror(C.int(code))) }

// cstr returns a C copy of s; the caller frees it.
func cstr(s string) *C.char { return C.CString(s) }

func free(p *C.char) { C.free(unsafe.Pointer(p)) }

// ptr returns a pointer to b's first byte for the duration of a C call.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

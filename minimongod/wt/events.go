package wt

/*
#include "shim.h"
*/
import "C"

import "sync/atomic"

// MessageFunc receives WiredTiger's error and informational messages.
type MessageFunc func(isError bool, code int, msg string)

var messageSink atomic.Pointer[MessageFunc]

// SetMessageFunc routes WiredTiger's messages (errors and informational) to
// f, e.g. the server log. Without one they are dropped.
func SetMessageFunc(f MessageFunc) { messageSink.Store(&f) }

//export wtdGoMessage
func wtdGoMessage(isError C.int, code C.int, msg *C.char) {
	f := messageSink.Load()
	if f == nil || *f == nil {
		return
	}
	(*f)(isError != 0, int(code), C.GoString(msg))
}

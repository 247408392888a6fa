package wt

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// codeInvalid is EINVAL, WiredTiger's answer to a configuration it refuses.
const codeInvalid = 22

// ConfigKeys returns the top-level keys of a configuration string as
// WiredTiger's own parser reads them (wiredtiger_config_parser_open):
// "a=1,b=(c=2)" has the keys a and b.
func ConfigKeys(config string) ([]string, error) {
	if config == "" {
		return nil, nil
	}
	cfg := cstr(config)
	defer free(cfg)
	var p *C.WT_CONFIG_PARSER
	if r := C.wtd_config_parser_open(cfg, C.size_t(len(config)), &p); r != 0 {
		return nil, &Error{Op: "wiredtiger_config_parser_open", Code: int(r), Message: fmt.Sprintf("cannot parse %q: %s", config, ErrorText(int(r)))}
	}
	defer C.wtd_config_parser_close(p)
	var keys []string
	for {
		k := C.wtd_config_next_key(p, cfg)
		if k.ret == codeNotFound {
			return keys, nil
		}
		if k.ret != 0 {
			return nil, &Error{Op: "WT_CONFIG_PARSER.next", Code: int(k.ret), Message: fmt.Sprintf("cannot parse %q: %s", config, ErrorText(int(k.ret)))}
		}
		keys = append(keys, C.GoStringN((*C.char)(unsafe.Add(unsafe.Pointer(cfg), k.off)), C.int(k.len)))
	}
}

// runtimeRefused holds the WT_CONNECTION::reconfigure keys that
// Reconfigure does not hand to WiredTiger, each with the reason.
var runtimeRefused = map[string]string{
	// WiredTiger 3.2.1 gives a session its trace buffer only when the
	// session opens with tracking on: turned on later, the sessions already
	// open (its own threads' among them) trace through a null buffer and the
	// process dies of SIGSEGV.
	"operation_tracking": "operation_tracking cannot be changed at runtime " +
		"(WiredTiger 3.2.1 crashes when sessions opened before it was enabled trace an operation); " +
		"give it in the configuration the database is opened with (--wiredTigerEngineConfigString)",
}

// checkRuntimeConfig refuses a reconfigure string holding a key of
// runtimeRefused, with an EINVAL error that says why. A string the parser
// cannot read is left to WiredTiger's reconfigure, which refuses it with
// its own message.
func checkRuntimeConfig(config string) error {
	keys, err := ConfigKeys(config)
	if err != nil {
		return nil
	}
	for _, k := range keys {
		top, _, _ := strings.Cut(k, ".")
		if why, ok := runtimeRefused[top]; ok {
			return &Error{Op: "WT_CONNECTION.reconfigure", Code: codeInvalid, Message: why}
		}
	}
	return nil
}

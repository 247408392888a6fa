package server

import (
	"sync"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// failPanicInCommand is the fail point that panics inside a command, to
// test that a panic fails only its own request.
const failPanicInCommand = "minimongodPanicInCommand"

// failpoints holds the test fail points configureFailPoint sets, as
// mongod's are (only with --setParameter enableTestCommands=1).
type failpoints struct {
	mu sync.Mutex
	// panicIn is the set of command names failPanicInCommand applies to;
	// nil when the fail point is off.
	panicIn map[string]bool
}

// maybePanic panics when the panic fail point is on for command name.
func (f *failpoints) maybePanic(name string) {
	f.mu.Lock()
	on := f.panicIn[name]
	f.mu.Unlock()
	if on {
		panic("fail point " + failPanicInCommand + " is on for command " + name)
	}
}

// cmdConfigureFailPoint is {configureFailPoint: name, mode: "alwaysOn" |
// "off", data: {commands: [...]}}.
func cmdConfigureFailPoint(c *clientConn, req *request, dst []byte) ([]byte, error) {
	v := req.body.Index(0).Value()
	if v.Type != bsoncore.TypeString || v.StringValue() != failPanicInCommand {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "Cannot find failpoint: %s", v.String())
	}
	mode, err := req.lookupErr("mode")
	if err != nil || mode.Type != bsoncore.TypeString || (mode.StringValue() != "alwaysOn" && mode.StringValue() != "off") {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "minimongod's fail points take mode \"alwaysOn\" or \"off\"")
	}
	set := map[string]bool{}
	if data, err := req.lookupErr("data"); err == nil && data.Type == bsoncore.TypeEmbeddedDocument {
		if names, err := data.Document().LookupErr("commands"); err == nil && names.Type == bsoncore.TypeArray {
			vals, _ := names.Array().Values()
			for _, n := range vals {
				if s, ok := n.StringValueOK(); ok {
					set[s] = true
				}
			}
		}
	}
	f := &c.s.failpoints
	f.mu.Lock()
	was := len(f.panicIn) > 0
	f.panicIn = nil
	if mode.StringValue() == "alwaysOn" {
		f.panicIn = set
	}
	f.mu.Unlock()
	return bsoncore.AppendInt32Element(dst, "count", boolInt(was)), nil
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

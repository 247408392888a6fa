package server

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mlog"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/options"
	"wtd/minimongod/wt"
)

// param is one server parameter (getParameter / setParameter /
// --setParameter), with mongod's name.
type param struct {
	name     string
	runtime  bool // settable with setParameter
	startup  bool // settable with --setParameter
	appendTo func(dst []byte, key string) []byte
	set      func(v bsoncore.Value) error
	setStr   func(s string) error
}

// params holds the server's parameters and their current values.
type params struct {
	s      *Server
	mu     sync.Mutex
	byName map[string]*param
	alias  map[string]string // older name -> current name

	engineRuntimeConfig string
	journalInterval     int64
	syncDelaySecs       float64
	cursorTimeoutMillis int64
	maxSortBytes        int64
	logLevel            int64
	ttlEnabled          bool
	ttlSleepSecs        int64
	enableTestCommands  bool
	ftdc                ftdcParams
}

func newParams(s *Server, startup []options.Param) (*params, error) {
	p := &params{s: s, byName: map[string]*param{}, alias: map[string]string{}, journalInterval: 100, syncDelaySecs: s.opts.SyncDelay,
		cursorTimeoutMillis: 600000, maxSortBytes: 100 * 1024 * 1024, ttlEnabled: true, ttlSleepSecs: 60}
	p.register(p.stringParam("wiredTigerEngineRuntimeConfig", &p.engineRuntimeConfig, p.reconfigure))
	p.register(p.intParam("journalCommitInterval", &p.journalInterval, 1, 500))
	p.register(p.floatParam("syncdelay", &p.syncDelaySecs, 0, 9.9e6))
	p.register(p.intParam("cursorTimeoutMillis", &p.cursorTimeoutMillis, 1, math.MaxInt64))
	p.register(p.intParam("internalQueryExecMaxBlockingSortBytes", &p.maxSortBytes, 0, math.MaxInt64))
	p.register(p.intParam("logLevel", &p.logLevel, 0, 5))
	p.register(p.boolParam("ttlMonitorEnabled", &p.ttlEnabled))
	p.register(p.intParamCheck("ttlMonitorSleepSecs", &p.ttlSleepSecs, gtCheck("ttlMonitorSleepSecs", 0)))
	p.registerExecControl()
	p.registerFTDC()
	testCmds := p.boolParam("enableTestCommands", &p.enableTestCommands)
	testCmds.runtime = false
	p.register(testCmds)
	for _, sp := range startup {
		prm, ok := p.lookup(sp.Name)
		if !ok || !prm.startup {
			return nil, fmt.Errorf("Illegal --setParameter parameter: \"%s\"", sp.Name)
		}
		if err := prm.setStr(sp.Value); err != nil {
			return nil, fmt.Errorf("Bad value for parameter \"%s\": %v", sp.Name, errText(err))
		}
	}
	return p, nil
}

func errText(err error) string {
	if me, ok := err.(*mongoerr.Error); ok {
		return me.Msg
	}
	return err.Error()
}

func (p *params) register(prm *param) { p.byName[prm.name] = prm }

// registerAlias makes old another name of the parameter current.
func (p *params) registerAlias(old, current string) { p.alias[old] = current }

// lookup finds a parameter by its current or an older name.
func (p *params) lookup(name string) (*param, bool) {
	if cur, ok := p.alias[name]; ok {
		name = cur
	}
	prm, ok := p.byName[name]
	return prm, ok
}

func (p *params) get(f func()) {
	p.mu.Lock()
	f()
	p.mu.Unlock()
}

func (p *params) syncDelay() (v float64) { p.get(func() { v = p.syncDelaySecs }); return }
func (p *params) journalCommitInterval() (v int64) {
	p.get(func() { v = p.journalInterval })
	return
}
func (p *params) testCommands() (v bool)   { p.get(func() { v = p.enableTestCommands }); return }
func (p *params) sortLimit() (v int64)     { p.get(func() { v = p.maxSortBytes }); return }
func (p *params) cursorTimeout() (v int64) { p.get(func() { v = p.cursorTimeoutMillis }); return }
func (p *params) ttl() (enabled bool, secs int64) {
	p.get(func() { enabled, secs = p.ttlEnabled, p.ttlSleepSecs })
	return
}

// reconfigure hands wiredTigerEngineRuntimeConfig to WiredTiger. A
// refusal is mongod's BadValue "WiredTiger reconfiguration failed with
// error code (N): <strerror>", followed by what WiredTiger said was wrong.
func (p *params) reconfigure(cfg string) error {
	if err := p.s.conn.Reconfigure(cfg); err != nil {
		code, detail := 0, err.Error()
		var we *wt.Error
		if errors.As(err, &we) {
			code, detail = we.Code, reconfigureDetail(we)
		}
		msg := fmt.Sprintf("WiredTiger reconfiguration failed with error code (%d): %s", code, wt.ErrorText(code))
		if detail != "" {
			msg += ": " + detail
		}
		return mongoerr.New(mongoerr.CodeBadValue, "%s", msg)
	}
	p.s.log.Info("STORAGE", 22376, "conn", "Reconfiguring", mlog.A("newConfig", cfg))
	return nil
}

// reconfigureDetail is WiredTiger's message for a failed reconfigure
// without its timestamp, thread, call and source-line prefixes and without
// the error text at its end: "unknown configuration key: 'x'".
func reconfigureDetail(e *wt.Error) string {
	msg := e.Message
	if _, after, ok := strings.Cut(msg, "WT_CONNECTION.reconfigure: "); ok {
		msg = after
	}
	// "__statlog_config, 171: ..." names the function and line.
	if where, rest, ok := strings.Cut(msg, ": "); ok {
		if _, line, ok := strings.Cut(where, ", "); ok && line != "" && strings.Trim(line, "0123456789") == "" {
			msg = rest
		}
	}
	return strings.TrimSuffix(msg, ": "+wt.ErrorText(e.Code))
}

func badType(name string, v bsoncore.Value) error {
	return mongoerr.New(mongoerr.CodeBadValue, "Invalid value for %s: %s", name, v.String())
}

func (p *params) stringParam(name string, dst *string, apply func(string) error) *param {
	setStr := func(s string) error {
		if p.s.conn != nil {
			if err := apply(s); err != nil {
				return err
			}
		} else {
			p.s.opts.EngineConfigString += "," + s
		}
		p.mu.Lock()
		*dst = s
		p.mu.Unlock()
		return nil
	}
	return &param{name: name, runtime: true, startup: true,
		appendTo: func(d []byte, k string) []byte {
			p.mu.Lock()
			defer p.mu.Unlock()
			return bsoncore.AppendStringElement(d, k, *dst)
		},
		setStr: setStr,
		set: func(v bsoncore.Value) error {
			if v.Type != bsoncore.TypeString {
				return mongoerr.New(mongoerr.CodeTypeMismatch, "Unexpected value type for %s", name)
			}
			return setStr(v.StringValue())
		}}
}

func (p *params) intParam(name string, dst *int64, lo, hi int64) *param {
	return p.intParamCheck(name, dst, func(n int64) error {
		if n < lo || n > hi {
			return mongoerr.New(mongoerr.CodeBadValue, "Invalid value for parameter %s: %d is not greater than or equal to %d and less than or equal to %d", name, n, lo, hi)
		}
		return nil
	})
}

// gtCheck is mongod's IDL "gt" validator, with its message
// (idl/server_parameter_with_storage.h addBound).
func gtCheck(name string, bound int64) func(int64) error {
	return func(n int64) error {
		if n <= bound {
			return mongoerr.New(mongoerr.CodeBadValue, "Invalid value for parameter %s: %d is not greater than %d", name, n, bound)
		}
		return nil
	}
}

// intParamCheck is an integer parameter stored in dst after validate
// accepts it.
func (p *params) intParamCheck(name string, dst *int64, validate func(int64) error) *param {
	get := func() int64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return *dst
	}
	set := func(n int64) error {
		if err := validate(n); err != nil {
			return err
		}
		p.mu.Lock()
		*dst = n
		p.mu.Unlock()
		return nil
	}
	return p.intParamFunc(name, get, set)
}

// intParamFunc is an integer parameter read by get and validated and
// stored by set.
func (p *params) intParamFunc(name string, get func() int64, set func(int64) error) *param {
	check := set
	return &param{name: name, runtime: true, startup: true,
		appendTo: func(d []byte, k string) []byte {
			v := get()
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return bsoncore.AppendInt32Element(d, k, int32(v))
			}
			return bsoncore.AppendInt64Element(d, k, v)
		},
		setStr: func(s string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return mongoerr.New(mongoerr.CodeFailedToParse, "Failed to parse number '%s' in %s", s, name)
			}
			return check(n)
		},
		set: func(v bsoncore.Value) error {
			n, ok := v.AsInt64OK()
			if !ok {
				f, fok := v.AsFloat64OK()
				if !fok || f != math.Trunc(f) {
					return badType(name, v)
				}
				n = int64(f)
			}
			return check(n)
		}}
}

func (p *params) floatParam(name string, dst *float64, lo, hi float64) *param {
	check := func(f float64) error {
		if f < lo || f > hi || math.IsNaN(f) {
			return mongoerr.New(mongoerr.CodeBadValue, "Invalid value for parameter %s: %v is not greater than or equal to %v and less than or equal to %v", name, f, lo, hi)
		}
		p.mu.Lock()
		*dst = f
		p.mu.Unlock()
		return nil
	}
	return &param{name: name, runtime: true, startup: true,
		appendTo: func(d []byte, k string) []byte {
			p.mu.Lock()
			defer p.mu.Unlock()
			return bsoncore.AppendDoubleElement(d, k, *dst)
		},
		setStr: func(s string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return mongoerr.New(mongoerr.CodeFailedToParse, "Failed to parse number '%s' in %s", s, name)
			}
			return check(f)
		},
		set: func(v bsoncore.Value) error {
			f, ok := v.AsFloat64OK()
			if !ok {
				return badType(name, v)
			}
			return check(f)
		}}
}

func (p *params) boolParam(name string, dst *bool) *param {
	store := func(b bool) error {
		p.mu.Lock()
		*dst = b
		p.mu.Unlock()
		return nil
	}
	return &param{name: name, runtime: true, startup: true,
		appendTo: func(d []byte, k string) []byte {
			p.mu.Lock()
			defer p.mu.Unlock()
			return bsoncore.AppendBooleanElement(d, k, *dst)
		},
		setStr: func(s string) error {
			switch s {
			case "true", "1":
				return store(true)
			case "false", "0":
				return store(false)
			}
			return mongoerr.New(mongoerr.CodeFailedToParse, "Invalid value for %s: '%s'; expected true or false", name, s)
		},
		set: func(v bsoncore.Value) error {
			switch v.Type {
			case bsoncore.TypeBoolean:
				return store(v.Boolean())
			case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble:
				f, _ := v.AsFloat64OK()
				return store(f != 0)
			}
			return badType(name, v)
		}}
}

// genericArgs are command fields that are not parameters.
var genericArgs = map[string]bool{"$db": true, "lsid": true, "$clusterTime": true, "$readPreference": true,
	"comment": true, "txnNumber": true, "autocommit": true, "apiVersion": true, "apiStrict": true,
	"apiDeprecationErrors": true, "maxTimeMS": true, "readConcern": true, "writeConcern": true, "help": true}

func cmdGetParameter(c *clientConn, req *request, dst []byte) ([]byte, error) {
	p := c.s.params
	first, _ := req.body.IndexErr(0)
	all := false
	if v := first.Value(); v.Type == bsoncore.TypeString && v.StringValue() == "*" {
		all = true
	} else if v.Type == bsoncore.TypeEmbeddedDocument {
		if a, err := v.Document().LookupErr("allParameters"); err == nil && a.Type == bsoncore.TypeBoolean && a.Boolean() {
			all = true
		}
	}
	n := 0
	if all {
		for _, name := range sortedKeys(p.byName) {
			dst = p.byName[name].appendTo(dst, name)
			n++
		}
	} else {
		elems, _ := req.body.Elements()
		for _, el := range elems[1:] {
			// Answered under the name asked, current or older.
			if prm, ok := p.lookup(el.Key()); ok {
				dst = prm.appendTo(dst, el.Key())
				n++
			}
		}
	}
	if n == 0 {
		return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "no option found to get")
	}
	return dst, nil
}

func hasField(d bsoncore.Document, name string) bool {
	_, err := d.LookupErr(name)
	return err == nil
}

func cmdSetParameter(c *clientConn, req *request, dst []byte) ([]byte, error) {
	p := c.s.params
	elems, err := req.body.Elements()
	if err != nil {
		return nil, err
	}
	var toSet []bsoncore.Element
	seen := map[string]bool{}
	for _, el := range elems[1:] {
		name := el.Key()
		if genericArgs[name] {
			continue
		}
		prm, ok := p.lookup(name)
		if !ok {
			return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "attempted to set unrecognized parameter [%s], use help:true to see options ", name)
		}
		if !prm.runtime {
			return nil, mongoerr.New(mongoerr.CodeIllegalOperation, "not allowed to change [%s] at runtime", name)
		}
		if seen[prm.name] {
			return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "attempted to set parameter [%s] twice in the same setParameter command", name)
		}
		seen[prm.name] = true
		toSet = append(toSet, el)
	}
	for i, el := range toSet {
		prm, _ := p.lookup(el.Key())
		if i == 0 {
			dst = prm.appendTo(dst, "was")
		}
		if err := prm.set(el.Value()); err != nil {
			return nil, err
		}
		c.s.log.Info("COMMAND", 23435, c.ctxName(), "Successfully set parameter to new value", mlog.A("parameterName", el.Key()), mlog.A("newValue", el.Value().String()))
	}
	if len(toSet) == 0 {
		return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "no option found to set, use help:true to see options ")
	}
	return dst, nil
}

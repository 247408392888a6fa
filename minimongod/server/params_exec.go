package server

import (
	"math"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// registerExecControl registers the execution control parameters under
// current mongod's names, with the older names as aliases.
func (p *params) registerExecControl() {
	x := p.s.exec
	for _, k := range []ticketKind{readTicket, writeTicket} {
		kind := strings.ToUpper(k.String()[:1]) + k.String()[1:]
		name := "executionControlConcurrent" + kind + "Transactions"
		p.register(p.ticketParam(name, k))
		p.registerAlias("storageEngineConcurrent"+kind+"Transactions", name)
		p.registerAlias("wiredTigerConcurrent"+kind+"Transactions", name)
	}
	p.register(p.enumParam("executionControlConcurrencyAdjustmentAlgorithm", []string{algoFixed, algoProbing},
		func() string { a, _ := x.settings(); return a }, x.setAlgorithm))
	p.registerAlias("storageEngineConcurrencyAdjustmentAlgorithm", "executionControlConcurrencyAdjustmentAlgorithm")
	const intervalName = "executionControlConcurrencyAdjustmentIntervalMillis"
	gt0 := gtCheck(intervalName, 0)
	p.register(p.intParamFunc(intervalName,
		func() int64 { _, d := x.settings(); return d.Milliseconds() },
		func(n int64) error {
			if err := gt0(n); err != nil {
				return err
			}
			x.setInterval(time.Duration(min(n, math.MaxInt32)) * time.Millisecond)
			return nil
		}))
	p.registerAlias("storageEngineConcurrencyAdjustmentIntervalMillis", intervalName)
}

// ticketParam is executionControlConcurrent{Read,Write}Transactions, with
// mongod's validator (TicketingSystem::NormalPrioritySettings::
// validateConcurrent{Read,Write}Transactions): at least 5.
func (p *params) ticketParam(name string, k ticketKind) *param {
	x := p.s.exec
	get := func() int64 {
		r, w := x.limits()
		if k == writeTicket {
			return int64(w)
		}
		return int64(r)
	}
	set := func(n int64) error {
		if n < 5 {
			return mongoerr.New(mongoerr.CodeBadValue, "Concurrent %s transactions limit must be greater than or equal to 5.", k)
		}
		x.setLimit(k, int(min(n, math.MaxInt32)))
		return nil
	}
	return p.intParamFunc(name, get, set)
}

// enumParam is a string parameter that takes one of values.
func (p *params) enumParam(name string, values []string, get func() string, set func(string)) *param {
	setStr := func(s string) error {
		for _, v := range values {
			if s == v {
				set(s)
				return nil
			}
		}
		return mongoerr.New(mongoerr.CodeBadValue, "Enumeration value '%s' for field '%s' is not a valid value.", s, name)
	}
	return &param{name: name, runtime: true, startup: true,
		appendTo: func(d []byte, k string) []byte { return bsoncore.AppendStringElement(d, k, get()) },
		setStr:   setStr,
		set: func(v bsoncore.Value) error {
			if v.Type != bsoncore.TypeString {
				return badType(name, v)
			}
			return setStr(v.StringValue())
		}}
}

package server

import (
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// maxReplSetMembers bounds a numeric w, as mongod's parser does.
const maxReplSetMembers = 50

// writeConcern is a command's parsed writeConcern.
type writeConcern struct {
	w        int64  // numeric w (1 by default)
	wMode    string // string w ("majority")
	journal  bool   // j: any true-ish value
	jGiven   bool   // j is in the document, true or false
	fsync    bool
	wtimeout int64
}

// sync reports whether the write must reach the journal on disk before it
// is acknowledged: with j or fsync true-ish, and with w: "majority" unless
// j is given false, as mongod 4.4 on a standalone (w: "majority" takes its
// sync mode from writeConcernMajorityJournalDefault, true).
func (wc writeConcern) sync() bool {
	return wc.journal || wc.fsync || (wc.wMode == "majority" && !wc.jGiven)
}

// writeConcernArg parses the command's writeConcern as mongod 4.4 does
// (WriteConcernOptions::parse and the standalone checks): j and fsync are
// numbers or booleans taken by truth, w a number in [0, 50] or a string,
// wtimeout a number; on a standalone w may not exceed 1 and a string w
// must be "majority".
func writeConcernArg(req *request) (writeConcern, error) {
	wc := writeConcern{w: 1}
	v, err := req.lookupErr("writeConcern")
	if err != nil || v.Type == bsoncore.TypeNull {
		return wc, nil
	}
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return wc, mongoerr.New(mongoerr.CodeFailedToParse, "writeConcern must be an object")
	}
	elems, err := v.Document().Elements()
	if err != nil {
		return wc, mongoerr.New(mongoerr.CodeFailedToParse, "writeConcern is not a valid document")
	}
	for _, el := range elems {
		ev := el.Value()
		switch el.Key() {
		case "j", "fsync":
			if !ev.IsNumber() && ev.Type != bsoncore.TypeBoolean {
				return wc, mongoerr.New(mongoerr.CodeFailedToParse, "%s must be numeric or a boolean value", el.Key())
			}
			if el.Key() == "j" {
				wc.journal, wc.jGiven = truthy(ev), true
			} else {
				wc.fsync = truthy(ev)
			}
		case "w":
			if err := wc.parseW(ev); err != nil {
				return wc, err
			}
		case "wtimeout", "wTimeout":
			if ev.IsNumber() {
				f, _ := ev.AsFloat64OK()
				wc.wtimeout = int64(f)
			}
		case "wElectionId", "wOpTime", "getLastError", "provenance":
		default:
			return wc, mongoerr.New(mongoerr.CodeFailedToParse, "unrecognized write concern field: %s", el.Key())
		}
	}
	if wc.journal && wc.fsync {
		return wc, mongoerr.New(mongoerr.CodeFailedToParse, "fsync and j options cannot be used together")
	}
	if wc.w > 1 {
		return wc, mongoerr.New(mongoerr.CodeBadValue, "cannot use 'w' > 1 on a standalone")
	}
	if wc.wMode != "" && wc.wMode != "majority" {
		return wc, mongoerr.New(mongoerr.CodeBadValue, "cannot use non-majority 'w' mode %s when a host is not a member of a replica set", wc.wMode)
	}
	return wc, nil
}

// parseW reads w: a number in [0, 50], a string, or null/undefined for the
// default.
func (wc *writeConcern) parseW(v bsoncore.Value) error {
	switch {
	case v.IsNumber():
		f, _ := v.AsFloat64OK()
		if f < 0 || f > maxReplSetMembers {
			return mongoerr.New(mongoerr.CodeFailedToParse, "w has to be a non-negative number and not greater than %d; found: %s", maxReplSetMembers, v.String())
		}
		wc.w = int64(f)
	case v.Type == bsoncore.TypeString:
		wc.wMode = v.StringValue()
	case v.Type == bsoncore.TypeNull || v.Type == bsoncore.TypeUndefined:
	default:
		return mongoerr.New(mongoerr.CodeFailedToParse, "w has to be a number or a string")
	}
	return nil
}

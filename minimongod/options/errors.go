package options

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Exit codes mongod 4.4 uses for the failures this package reports.
const (
	// ExitBadOptions is EXIT_BADOPTIONS: the options parser rejected the input.
	ExitBadOptions = 2
	// ExitFailure is EXIT_FAILURE: a global initializer (option validation) failed.
	ExitFailure = 1
	// ExitUncaught is EXIT_UNCAUGHT: initAndListen threw (bad dbpath, unknown engine).
	ExitUncaught = 100
)

// Stage says at which point of mongod's startup an error is detected, which
// decides how mongod reports it.
type Stage int

const (
	// StageParse errors come from the options parser. mongod prints the
	// reason and a "try 'mongod --help'" line to stderr and exits 2.
	StageParse Stage = iota
	// StageInit errors come from option validation. mongod logs them as
	// fatal log id 20574 "Error during global initialization" with attr
	// error {code, codeName, errmsg} and exits 1.
	StageInit
	// StageStartup errors are thrown from initAndListen. mongod logs them as
	// error log id 20557 "DBException in initAndListen, terminating" with
	// attr error "<CodeName>: <reason>" and exits 100.
	StageStartup
	// StageUnsupported errors reject mongod features minimongod does not
	// implement (--fork, --replSet, syslog). The text is minimongod's own;
	// the exit code is 2.
	StageUnsupported
)

// UsageError is returned for bad options. Error returns Msg.
type UsageError struct {
	// Msg is the text to print: for StageParse both lines mongod writes to
	// stderr (without a final newline); for StageInit the errmsg; for
	// StageStartup the "<CodeName>: <reason>" string mongod logs.
	Msg string
	// Reason is the bare status reason.
	Reason string
	// Stage tells how mongod reports the error.
	Stage Stage
	// Exit is the process exit status mongod uses (see ExitCode).
	Exit int
	// Code and CodeName are mongod's ErrorCodes value (e.g. 2, "BadValue").
	Code     int
	CodeName string
}

// Error implements error.
func (e *UsageError) Error() string { return e.Msg }

// ExitCode returns the process exit status mongod uses for this error.
func (e *UsageError) ExitCode() int { return e.Exit }

// LogAttr returns the value mongod logs under attr "error": a document
// {code, codeName, errmsg} for StageInit, the Msg string otherwise.
func (e *UsageError) LogAttr() any {
	if e.Stage != StageInit {
		return e.Msg
	}
	return bson.D{
		{Key: "code", Value: int32(e.Code)},
		{Key: "codeName", Value: e.CodeName},
		{Key: "errmsg", Value: e.Reason},
	}
}

// tryHelp is the line mongod prints after every parser error
// (options_parser_init.cpp, with argv[0] "mongod").
const tryHelp = "try 'mongod --help' for more information"

// parseError builds a StageParse error from the parser's status reason.
func parseError(reason string) *UsageError {
	return &UsageError{
		Msg:      reason + "\n" + tryHelp,
		Reason:   reason,
		Stage:    StageParse,
		Exit:     ExitBadOptions,
		Code:     2,
		CodeName: "BadValue",
	}
}

// initError builds a StageInit BadValue error.
func initError(reason string) *UsageError {
	return &UsageError{
		Msg:      reason,
		Reason:   reason,
		Stage:    StageInit,
		Exit:     ExitFailure,
		Code:     2,
		CodeName: "BadValue",
	}
}

// startupError builds a StageStartup error with the given code name.
func startupError(code int, codeName, reason string) *UsageError {
	return &UsageError{
		Msg:      codeName + ": " + reason,
		Reason:   reason,
		Stage:    StageStartup,
		Exit:     ExitUncaught,
		Code:     code,
		CodeName: codeName,
	}
}

// unsupportedError builds a StageUnsupported error.
func unsupportedError(reason string) *UsageError {
	return &UsageError{
		Msg:      reason,
		Reason:   reason,
		Stage:    StageUnsupported,
		Exit:     ExitBadOptions,
		Code:     2,
		CodeName: "BadValue",
	}
}

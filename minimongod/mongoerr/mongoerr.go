// Package mongoerr holds the server errors minimongod returns, with mongod's
// numeric codes and code names, so every command reply fails the way mongod's does.
package mongoerr

import "fmt"

// Error is a command failure as mongod reports it: {ok: 0, errmsg, code, codeName}.
type Error struct {
	Code     int32
	CodeName string
	Msg      string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d): %s", e.CodeName, e.Code, e.Msg) }

// Codes used by minimongod, as in mongod's error_codes.yml.
const (
	CodeInternalError          = 1
	CodeBadValue               = 2
	CodeNoSuchKey              = 4
	CodeFailedToParse          = 9
	CodeOverflow               = 15
	CodeTypeMismatch           = 14
	CodeInvalidLength          = 16
	CodeIllegalOperation       = 20
	CodeNamespaceNotFound      = 26
	CodeIndexNotFound          = 27
	CodePathNotViable          = 28
	CodeConflictingUpdateOps   = 40
	CodeCursorNotFound         = 43
	CodeNamespaceExists        = 48
	CodeCommandNotFound        = 59
	CodeImmutableField         = 66
	CodeInvalidOptions         = 72
	CodeInvalidNamespace       = 73
	CodeIndexOptionsConflict   = 85
	CodeIndexKeySpecsConflict  = 86
	CodeProtocolError          = 17
	CodeInvalidIDField         = 53
	CodeInterrupted            = 11601
	CodeDuplicateKey           = 11000
	CodeQueryExceededMemory    = 292
	CodeShutdownInProgress     = 91
	CodeUnknownError           = 8
	CodeInvalidBSON            = 22
	CodeOperationFailed        = 96
	CodeDollarPrefixedField    = 52
	CodeBSONObjectTooLarge     = 10334
	CodeInvalidPath            = 30
	CodeNotImplemented         = 238
	CodeMaxTimeMSExpired       = 50
	CodeCannotCreateIndex      = 67
	CodeInvalidIndexSpecOption = 197
	CodeUnauthorized           = 13
	CodeQueryPlanKilled        = 175
	CodeCannotIndexParallel    = 171
	CodeCannotBackfillArray    = 51
	CodeMissingField           = 40414
	CodeNoDB                   = 40571
	CodeNoReplicationEnabled   = 76
	CodeUpdateTooLarge         = 17419
	CodeUpsertTooLarge         = 17420
	// MaxBSONObjectSize is the largest document a write may store
	// (wire.MaxBSONObjectSize, the hello reply's maxBsonObjectSize).
	MaxBSONObjectSize = 16 * 1024 * 1024
	// MaxStorageDepth is how deep a stored document may nest, the
	// top-level document counting as the first level, as mongod's
	// BSONDepth::getMaxDepthForUserStorage (200 less 20 kept for the
	// server's own wrapping).
	MaxStorageDepth = 180
)

var names = map[int32]string{
	1: "InternalError", 2: "BadValue", 4: "NoSuchKey", 8: "UnknownError", 9: "FailedToParse",
	14: "TypeMismatch", 15: "Overflow", 16: "InvalidLength", 17: "ProtocolError", 20: "IllegalOperation",
	22: "InvalidBSON", 26: "NamespaceNotFound", 27: "IndexNotFound", 28: "PathNotViable",
	30: "InvalidPath", 40: "ConflictingUpdateOperators", 43: "CursorNotFound", 48: "NamespaceExists",
	50: "MaxTimeMSExpired", 52: "DollarPrefixedFieldName", 53: "InvalidIdField", 59: "CommandNotFound",
	66: "ImmutableField", 67: "CannotCreateIndex", 72: "InvalidOptions", 73: "InvalidNamespace",
	85: "IndexOptionsConflict", 86: "IndexKeySpecsConflict", 91: "ShutdownInProgress",
	96: "OperationFailed", 197: "InvalidIndexSpecificationOption", 238: "NotImplemented",
	292: "QueryExceededMemoryLimitNoDiskUseAllowed", 10334: "BSONObjectTooLarge",
	11000: "DuplicateKey", 11601: "Interrupted", 13: "Unauthorized", 175: "QueryPlanKilled",
	76: "NoReplicationEnabled", 171: "CannotIndexParallelArrays", 51: "CannotBackfillArray", 51024: "Location51024",
}

// Name returns mongod's codeName for code, or "Location<code>" as mongod does for
// codes without a name.
func Name(code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	return fmt.Sprintf("Location%d", code)
}

// New returns an Error with the code's mongod name.
func New(code int32, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Code: code, CodeName: Name(code), Msg: msg}
}

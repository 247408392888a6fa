package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors. Decode errors are *DecodeError values wrapping one of
// ErrMalformed, ErrUnknownRequiredFlag, ErrChecksumMismatch or an
// *UnsupportedOpCodeError; test them with errors.Is and errors.As.
var (
	// ErrMalformed reports a message that does not follow the wire format.
	ErrMalformed = errors.New("malformed message")
	// ErrUnknownRequiredFlag reports an OP_MSG with a required flag bit
	// (bits 0-15) this server does not understand.
	ErrUnknownRequiredFlag = errors.New("unknown required OP_MSG flag bits")
	// ErrChecksumMismatch reports an OP_MSG whose CRC-32C does not match.
	ErrChecksumMismatch = errors.New("OP_MSG checksum mismatch")
	// ErrUnsupportedOpCode is matched by every *UnsupportedOpCodeError.
	ErrUnsupportedOpCode = errors.New("unsupported opcode")
	// ErrBadLength reports a message length prefix outside the accepted
	// range. It is matched by every *TooLargeError. The connection cannot be
	// resynchronised and must be closed.
	ErrBadLength = errors.New("bad message length")
)

// DecodeError is returned by Decode and DecodeReply. Header is the decoded
// message header, so that a server can address an error reply
// (ResponseTo = Header.RequestID); it is zero if the input was shorter than
// a header.
type DecodeError struct {
	Header Header
	Err    error
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode message (request %d, opcode %d): %v",
		e.Header.RequestID, e.Header.OpCode, e.Err)
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// UnsupportedOpCodeError reports a message with an opcode this package does
// not decode, such as OP_COMPRESSED or the removed legacy CRUD opcodes.
type UnsupportedOpCodeError struct {
	OpCode int32
}

// Error implements error.
func (e *UnsupportedOpCodeError) Error() string {
	return fmt.Sprintf("unsupported opcode %d", e.OpCode)
}

// Is reports whether target is ErrUnsupportedOpCode.
func (e *UnsupportedOpCodeError) Is(target error) bool {
	return target == ErrUnsupportedOpCode
}

// TooLargeError reports a message length prefix larger than the limit
// passed to ReadMessage.
type TooLargeError struct {
	Length int64
	Max    int
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message length %d exceeds maximum %d", e.Length, e.Max)
}

// Is reports whether target is ErrBadLength.
func (e *TooLargeError) Is(target error) bool {
	return target == ErrBadLength
}

// malformed returns an error wrapping ErrMalformed with a description.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

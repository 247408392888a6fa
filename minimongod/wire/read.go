package wire

import (
	"fmt"
	"io"
)

// ReadMessage reads one message from r and decodes it.
//
// It reads the 4-byte length prefix first and rejects a length below the
// header size or above maxSize (DefaultMaxMessageSize when maxSize <= 0)
// before reading further: such errors match ErrBadLength (a length above
// maxSize is a *TooLargeError) and leave the stream unsynchronised, so the
// connection must be closed. Otherwise the message is read into buf, which
// is grown if too small, and decoded with Decode.
//
// ReadMessage returns the buffer, possibly reallocated, for reuse with the
// next call, also on error. The Message aliases that buffer, so the caller
// must be done with the Message before the next call. A clean end of stream
// before any byte of a message yields an error matching io.EOF.
func ReadMessage(r io.Reader, buf []byte, maxSize int) (*Message, []byte, error) {
	b, buf, err := readFrame(r, buf, maxSize)
	if err != nil {
		return nil, buf, err
	}
	m, err := Decode(b)
	return m, buf, err
}

// readFrame reads one length-prefixed frame from r into buf and returns the
// frame and the (possibly grown) buffer.
func readFrame(r io.Reader, buf []byte, maxSize int) (frame, newBuf []byte, err error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	buf = grow(buf, HeaderSize)
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, buf, fmt.Errorf("read message length: %w", err)
	}
	n := int64(int32(le.Uint32(buf)))
	if n < HeaderSize {
		return nil, buf, fmt.Errorf("check message length %d: %w", n, ErrBadLength)
	}
	if n > int64(maxSize) {
		return nil, buf, &TooLargeError{Length: n, Max: maxSize}
	}
	buf = grow(buf, int(n))
	if _, err := io.ReadFull(r, buf[4:n]); err != nil {
		return nil, buf, fmt.Errorf("read message body: %w", unexpected(err))
	}
	return buf[:n], buf, nil
}

// grow returns buf with capacity for at least n bytes, keeping its first
// four bytes (the length prefix already read).
func grow(buf []byte, n int) []byte {
	if cap(buf) >= n {
		return buf[:cap(buf)]
	}
	nb := make([]byte, n)
	copy(nb, buf[:min(len(buf), 4)])
	return nb
}

// unexpected turns io.EOF in the middle of a message into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

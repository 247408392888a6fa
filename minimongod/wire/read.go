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
	buf = grow(buf, 0, HeaderSize, HeaderSize)
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
	// The body is read in chunks into a buffer that grows as bytes
	// arrive, so that a declared length costs no memory until the client
	// actually sends that much.
	for have := 4; have < int(n); {
		chunk := min(int(n)-have, readChunk)
		buf = grow(buf, have, have+chunk, int(n))
		if _, err := io.ReadFull(r, buf[have:have+chunk]); err != nil {
			return nil, buf, fmt.Errorf("read message body: %w", unexpected(err))
		}
		have += chunk
	}
	return buf[:n], buf, nil
}

// readChunk is the most a message read asks for at once.
const readChunk = 1 << 20

// grow returns buf with capacity for at least need bytes (doubling, up to
// limit), keeping its first keep bytes.
func grow(buf []byte, keep, need, limit int) []byte {
	if cap(buf) >= need {
		return buf[:cap(buf)]
	}
	nb := make([]byte, min(max(need, 2*cap(buf)), max(limit, need)))
	copy(nb, buf[:min(len(buf), keep)])
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

package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestReadMessageStream(t *testing.T) {
	small := doc(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	big := doc(t, bson.D{{Key: "insert", Value: string(make([]byte, 1000))}, {Key: "$db", Value: "t"}})
	var stream []byte
	stream = AppendMsg(stream, 1, 0, 0, small)
	stream = AppendMsg(stream, 2, 0, 0, big)
	stream = AppendQuery(stream, 3, 0, "admin.$cmd", 0, -1, small)
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 64)
	var bodies []bson.Raw
	for {
		m, nb, err := ReadMessage(r, buf, 0)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("ReadMessage: %v", err)
		}
		body, _ := m.Command()
		bodies = append(bodies, append(bson.Raw(nil), body...))
		buf = nb
	}
	if diff := cmp.Diff([]bson.Raw{small, big, small}, bodies); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
	if cap(buf) < len(big) {
		t.Errorf("buffer capacity %d was not grown for a %d-byte body", cap(buf), len(big))
	}
}

func TestReadMessageErrors(t *testing.T) {
	body := doc(t, bson.D{{Key: "ping", Value: 1}})
	msg := AppendMsg(nil, 1, 0, 0, body)
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    error
		consume int // bytes ReadMessage may consume
	}{
		{"clean EOF", nil, 0, io.EOF, 0},
		{"partial length", msg[:2], 0, io.ErrUnexpectedEOF, 2},
		{"partial body", msg[:len(msg)-1], 0, io.ErrUnexpectedEOF, len(msg) - 1},
		{"length below header", cat(i32(15), make([]byte, 20)), 0, ErrBadLength, 4},
		{"negative length", cat(i32(-1), make([]byte, 20)), 0, ErrBadLength, 4},
		{"too large", msg, len(msg) - 1, ErrBadLength, 4},
		{"too large for default", cat(i32(DefaultMaxMessageSize+1), make([]byte, 20)), 0, ErrBadLength, 4},
		{"length beyond stream", setLen(msg, int32(len(msg)+1)), 0, io.ErrUnexpectedEOF, len(msg)},
		{"malformed", cat(i32(20), i32(0), i32(0), i32(OpMsg), i32(0)), 0, ErrMalformed, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bytes.NewReader(tt.in)
			m, _, err := ReadMessage(r, nil, tt.max)
			if !errors.Is(err, tt.want) || m != nil {
				t.Fatalf("ReadMessage = %v, %v; want nil, %v", m, err, tt.want)
			}
			if consumed := len(tt.in) - r.Len(); consumed > tt.consume {
				t.Errorf("ReadMessage consumed %d bytes, want at most %d", consumed, tt.consume)
			}
		})
	}
}

func TestReadMessageTooLargeError(t *testing.T) {
	_, _, err := ReadMessage(bytes.NewReader(i32(1000)), nil, 999)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Length != 1000 || tl.Max != 999 {
		t.Fatalf("ReadMessage error = %v, want *TooLargeError{1000, 999}", err)
	}
}

// A declared length costs memory only as the bytes arrive: a client that
// announces 48 MB and sends 100 bytes makes the buffer grow to a chunk at
// most.
func TestReadMessageAllocatesAsBytesArrive(t *testing.T) {
	msg := make([]byte, 4+100)
	le.PutUint32(msg, DefaultMaxMessageSize)
	_, buf, err := ReadMessage(bytes.NewReader(msg), nil, 0)
	if err == nil {
		t.Fatal("a truncated message decoded")
	}
	if cap(buf) > 2*readChunk {
		t.Errorf("buffer of %d bytes for 100 bytes received", cap(buf))
	}
}

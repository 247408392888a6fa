package wire

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestAppendMsgLayout(t *testing.T) {
	body := doc(t, bson.D{{Key: "ok", Value: 1.0}})
	prefix := []byte("prefix")
	b := AppendMsg(append([]byte(nil), prefix...), 5, 9, MoreToCome, body)
	if string(b[:len(prefix)]) != string(prefix) {
		t.Fatalf("AppendMsg clobbered dst prefix")
	}
	msg := b[len(prefix):]
	want := cat(i32(int32(HeaderSize+4+1+len(body))), i32(5), i32(9), i32(OpMsg), i32(int32(MoreToCome)), []byte{0}, body)
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("AppendMsg bytes (-want +got):\n%s", diff)
	}
}

func TestAppendMsgChecksum(t *testing.T) {
	body := doc(t, bson.D{{Key: "ok", Value: 1.0}})
	b := AppendMsg([]byte("xx"), 1, 2, ChecksumPresent, body)[2:]
	if want := withChecksum(AppendMsg(nil, 1, 2, 0, body)); string(want) != string(b) {
		t.Errorf("AppendMsg with checksum = %x, want %x", b, want)
	}
}

func TestAppendMsgNoAlloc(t *testing.T) {
	body := make([]byte, 200)
	dst := make([]byte, 0, 512)
	allocs := testing.AllocsPerRun(100, func() {
		dst = AppendMsg(dst[:0], 1, 2, 0, body)
	})
	if allocs != 0 {
		t.Errorf("AppendMsg allocated %v times, want 0", allocs)
	}
}

func TestReplyRoundTrip(t *testing.T) {
	d1 := doc(t, bson.D{{Key: "ismaster", Value: true}, {Key: "ok", Value: 1.0}})
	d2 := doc(t, bson.D{{Key: "n", Value: 2}})
	tests := []struct {
		name string
		b    []byte
		want *Reply
	}{
		{"isMaster reply", AppendReply(nil, 2, 1, 8, 0, 0, d1),
			&Reply{Header: Header{RequestID: 2, ResponseTo: 1, OpCode: OpReply}, ResponseFlags: 8, Documents: []bson.Raw{d1}}},
		{"cursor reply", AppendReply(nil, 3, 2, 0, 1<<40, 7, d1, d2),
			&Reply{Header: Header{RequestID: 3, ResponseTo: 2, OpCode: OpReply}, CursorID: 1 << 40, StartingFrom: 7, Documents: []bson.Raw{d1, d2}}},
		{"empty reply", AppendReply(nil, 4, 3, 1, 0, 0),
			&Reply{Header: Header{RequestID: 4, ResponseTo: 3, OpCode: OpReply}, ResponseFlags: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Header.MessageLength = int32(len(tt.b))
			got, err := DecodeReply(tt.b)
			if err != nil {
				t.Fatalf("DecodeReply: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeReply mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeReplyErrors(t *testing.T) {
	d1 := doc(t, bson.D{{Key: "ok", Value: 1.0}})
	miscount := AppendReply(nil, 1, 0, 0, 0, 0, d1)
	le.PutUint32(miscount[HeaderSize+16:], 2)
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"short header", []byte{1, 2}, ErrMalformed},
		{"not a reply", AppendMsg(nil, 1, 0, 0, d1), ErrUnsupportedOpCode},
		{"fields truncated", AppendReply(nil, 1, 0, 0, 0, 0)[:HeaderSize+10], ErrMalformed},
		{"count mismatch", miscount, ErrMalformed},
		{"bad document", AppendReply(nil, 1, 0, 0, 0, 0, d1[:len(d1)-1]), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			if len(b) >= HeaderSize {
				b = fixLen(append([]byte(nil), b...))
			}
			if _, err := DecodeReply(b); !errors.Is(err, tt.want) {
				t.Errorf("DecodeReply error = %v, want %v", err, tt.want)
			}
		})
	}
}

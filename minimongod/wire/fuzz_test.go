package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// fuzzSeeds returns valid messages of every decoded kind.
func fuzzSeeds(t testing.TB) [][]byte {
	body := doc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	d := doc(t, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1.5, "x", bson.D{{Key: "b", Value: true}}}},
		{Key: "r", Value: bson.Regex{Pattern: "a", Options: "i"}}, {Key: "c", Value: bson.CodeWithScope{Code: "f", Scope: bson.D{}}}})
	seq := Sequence{Identifier: "documents", Docs: []bson.Raw{d, d}}
	return [][]byte{
		AppendMsg(nil, 1, 0, 0, body),
		AppendMsg(nil, 2, 0, MoreToCome|ExhaustAllowed, d),
		AppendMsgSequences(nil, 3, 0, 0, body, seq, Sequence{Identifier: "x"}),
		AppendMsgSequences(nil, 4, 0, ChecksumPresent, body, seq),
		rawMsg(0, sec1("documents", d), sec0(body)),
		AppendQuery(nil, 5, 0, "admin.$cmd", 0, -1, body),
		queryMsg(i32(0), []byte("test.c\x00"), i32(1), i32(2), body, d),
		AppendReply(nil, 6, 5, 8, 0, 0, body, d),
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		m, err := Decode(b)
		if !bytes.Equal(orig, b) {
			t.Fatalf("Decode modified its input")
		}
		checkReadMessage(t, b, err)
		checkReply(t, b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || m != nil {
				t.Fatalf("Decode = %v, %v; want nil, *DecodeError", m, err)
			}
			return
		}
		m.DB()
		m.Command()
		checkReencode(t, m)
	})
}

// checkReadMessage checks that ReadMessage agrees with Decode on b.
func checkReadMessage(t *testing.T, b []byte, decodeErr error) {
	m, _, err := ReadMessage(bytes.NewReader(b), nil, 1<<20)
	if decodeErr == nil && len(b) <= 1<<20 && (err != nil || m == nil) {
		t.Fatalf("ReadMessage = %v, %v; Decode succeeded", m, err)
	}
}

// checkReply checks that a decodable OP_REPLY re-encodes to the same bytes.
func checkReply(t *testing.T, b []byte) {
	r, err := DecodeReply(b)
	if err != nil {
		return
	}
	docs := make([][]byte, len(r.Documents))
	for i, d := range r.Documents {
		docs[i] = d
	}
	h := r.Header
	re := AppendReply(nil, h.RequestID, h.ResponseTo, r.ResponseFlags, r.CursorID, r.StartingFrom, docs...)
	if !bytes.Equal(re, b) {
		t.Fatalf("OP_REPLY re-encoded as %x, want %x", re, b)
	}
}

// checkReencode encodes m again and checks that it decodes to the same
// message.
func checkReencode(t *testing.T, m *Message) {
	var re []byte
	if m.Header.OpCode == OpMsg {
		re = AppendMsgSequences(nil, m.Header.RequestID, m.Header.ResponseTo, m.FlagBits, m.Body, m.Sequences...)
	} else {
		re = AppendQuery(nil, m.Header.RequestID, m.Flags, m.FullCollectionName, m.NumberToSkip, m.NumberToReturn, m.Query)
		re = fixLen(append(re, m.ReturnFieldsSelector...))
		le.PutUint32(re[8:], uint32(m.Header.ResponseTo))
	}
	m2, err := Decode(re)
	if err != nil {
		t.Fatalf("Decode(re-encoded %+v): %v", m, err)
	}
	if diff := cmp.Diff(m, m2); diff != "" {
		t.Fatalf("re-encoded message differs (-orig +re):\n%s", diff)
	}
}

func TestFuzzSeedsDecode(t *testing.T) {
	for i, s := range fuzzSeeds(t) {
		_, err := Decode(s)
		if _, rerr := DecodeReply(s); err != nil && rerr != nil {
			t.Errorf("seed %d decodes with neither Decode (%v) nor DecodeReply (%v)", i, err, rerr)
		}
	}
}

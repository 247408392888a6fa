package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestDecodeRoundTrip(t *testing.T) {
	find := doc(t, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "$db", Value: "test"}})
	insert := doc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	d1 := doc(t, bson.D{{Key: "_id", Value: 1}})
	d2 := doc(t, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: bson.A{"a", bson.D{{Key: "y", Value: nil}}}}})
	hello := doc(t, bson.D{{Key: "isMaster", Value: 1}, {Key: "helloOk", Value: true}})
	sel := doc(t, bson.D{{Key: "a", Value: 1}})
	tests := []struct {
		name string
		b    []byte
		want *Message
	}{
		{"find body only", AppendMsg(nil, 7, 0, 0, find),
			&Message{Header: Header{RequestID: 7, OpCode: OpMsg}, Body: find}},
		{"insert with sequence", AppendMsgSequences(nil, 8, 0, 0, insert, Sequence{"documents", []bson.Raw{d1, d2}}),
			&Message{Header: Header{RequestID: 8, OpCode: OpMsg}, Body: insert,
				Sequences: []Sequence{{"documents", []bson.Raw{d1, d2}}}}},
		{"two sequences and empty one", AppendMsgSequences(nil, 9, 0, 0, insert, Sequence{"ops", []bson.Raw{d1}}, Sequence{"nsInfo", []bson.Raw{d2}}, Sequence{"empty", nil}),
			&Message{Header: Header{RequestID: 9, OpCode: OpMsg}, Body: insert,
				Sequences: []Sequence{{"ops", []bson.Raw{d1}}, {"nsInfo", []bson.Raw{d2}}, {"empty", nil}}}},
		{"sequence before body", rawMsg(0, sec1("documents", d1), sec0(insert)),
			&Message{Header: Header{RequestID: 7, OpCode: OpMsg}, Body: insert,
				Sequences: []Sequence{{"documents", []bson.Raw{d1}}}}},
		{"moreToCome and exhaustAllowed", AppendMsg(nil, 10, 3, MoreToCome|ExhaustAllowed, find),
			&Message{Header: Header{RequestID: 10, ResponseTo: 3, OpCode: OpMsg}, FlagBits: MoreToCome | ExhaustAllowed, Body: find}},
		{"unknown optional flag ignored", AppendMsg(nil, 11, 0, 1<<20, find),
			&Message{Header: Header{RequestID: 11, OpCode: OpMsg}, FlagBits: 1 << 20, Body: find}},
		{"checksum", AppendMsgSequences(nil, 12, 0, ChecksumPresent, insert, Sequence{"documents", []bson.Raw{d1}}),
			&Message{Header: Header{RequestID: 12, OpCode: OpMsg}, FlagBits: ChecksumPresent, Body: insert,
				Sequences: []Sequence{{"documents", []bson.Raw{d1}}}}},
		{"nested at depth limit", rawMsg(0, sec0(nested(t, maxBSONDepth))),
			&Message{Header: Header{RequestID: 7, OpCode: OpMsg}, Body: nested(t, maxBSONDepth)}},
		{"query isMaster", AppendQuery(nil, 1, 0, "admin.$cmd", 0, -1, hello),
			&Message{Header: Header{RequestID: 1, OpCode: OpQuery}, FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: hello}},
		{"query with selector", queryMsg(i32(4), []byte("test.c\x00"), i32(2), i32(10), d1, sel),
			&Message{Header: Header{OpCode: OpQuery}, Flags: 4, FullCollectionName: "test.c", NumberToSkip: 2, NumberToReturn: 10, Query: d1, ReturnFieldsSelector: sel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Header.MessageLength = int32(len(tt.b))
			got, err := Decode(tt.b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	body := doc(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	d1 := doc(t, bson.D{{Key: "_id", Value: 1}})
	noNUL := append(append([]byte(nil), body[:len(body)-1]...), 1)
	badType := cat(i32(8), []byte{0x42, 'a', 0}, []byte{0})
	var many [][]byte
	for i := range maxSequences + 1 {
		many = append(many, sec1(strings.Repeat("x", i+1)))
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"short header", make([]byte, 15), ErrMalformed},
		{"length larger than input", setLen(rawMsg(0, sec0(body)), 999), ErrMalformed},
		{"length smaller than input", append(rawMsg(0, sec0(body)), 0), ErrMalformed},
		{"negative length", setLen(rawMsg(0, sec0(body)), -1), ErrMalformed},
		{"header only", fixLen(AppendMsg(nil, 1, 0, 0, nil)[:HeaderSize]), ErrMalformed},
		{"no sections", rawMsg(0), ErrMalformed},
		{"two kind-0", rawMsg(0, sec0(body), sec0(body)), ErrMalformed},
		{"no kind-0", rawMsg(0, sec1("documents", d1)), ErrMalformed},
		{"unknown section kind", rawMsg(0, sec0(body), []byte{2}), ErrMalformed},
		{"kind-1 size truncated", rawMsg(0, sec0(body), []byte{1, 9, 0}), ErrMalformed},
		{"kind-1 size overruns", rawMsg(0, sec0(body), sec1Raw(100, []byte("documents\x00"))), ErrMalformed},
		{"kind-1 size too small", rawMsg(0, sec0(body), sec1Raw(4, nil)), ErrMalformed},
		{"kind-1 negative size", rawMsg(0, sec0(body), sec1Raw(-1, []byte("x\x00"))), ErrMalformed},
		{"kind-1 bad cstring", rawMsg(0, sec0(body), sec1Raw(8, []byte("docu"))), ErrMalformed},
		{"kind-1 doc overruns section", rawMsg(0, sec0(body), sec1Raw(int32(4+2+len(d1)-1), cat([]byte("d\x00"), d1[:len(d1)-1])), []byte{0}), ErrMalformed},
		{"kind-1 trailing partial doc", rawMsg(0, sec0(body), sec1Raw(int32(4+2+len(d1)+2), cat([]byte("d\x00"), d1, []byte{5, 0}))), ErrMalformed},
		{"kind-1 doc invalid", rawMsg(0, sec0(body), sec1("d", badType)), ErrMalformed},
		{"kind-1 duplicate identifier", rawMsg(0, sec0(body), sec1("d", d1), sec1("d", d1)), ErrMalformed},
		{"too many sequences", rawMsg(0, append([][]byte{sec0(body)}, many...)...), ErrMalformed},
		{"body length overruns", rawMsg(0, sec0(body[:len(body)-1])), ErrMalformed},
		{"body length too small", rawMsg(0, sec0(cat(i32(4), []byte{0, 0, 0, 0}))), ErrMalformed},
		{"body negative length", rawMsg(0, sec0(cat(i32(-5), []byte{0}))), ErrMalformed},
		{"body missing NUL", rawMsg(0, sec0(noNUL)), ErrMalformed},
		{"body unknown BSON type", rawMsg(0, sec0(badType)), ErrMalformed},
		{"body nested too deep", rawMsg(0, sec0(nested(t, maxBSONDepth+1))), ErrMalformed},
		{"unknown required flag bit 2", rawMsg(1<<2, sec0(body)), ErrUnknownRequiredFlag},
		{"unknown required flag bit 15", rawMsg(1<<15, sec0(body)), ErrUnknownRequiredFlag},
		{"checksum mismatch", func() []byte { b := withChecksum(rawMsg(0, sec0(body))); b[len(b)-1] ^= 1; return b }(), ErrChecksumMismatch},
		{"checksum over corrupted body", func() []byte { b := withChecksum(rawMsg(0, sec0(body))); b[25] ^= 1; return b }(), ErrChecksumMismatch},
		{"checksum truncated", rawMsg(ChecksumPresent, []byte{0, 0}), ErrMalformed},
		{"compressed", fixLen(cat(make([]byte, 12), i32(OpCompressed), make([]byte, 9))), ErrUnsupportedOpCode},
		{"legacy insert", fixLen(cat(make([]byte, 12), i32(OpInsert))), ErrUnsupportedOpCode},
		{"reply to server", AppendReply(nil, 1, 0, 0, 0, 0, body), ErrUnsupportedOpCode},
		{"unknown opcode", fixLen(cat(make([]byte, 12), i32(9999))), ErrUnsupportedOpCode},
		{"query flags truncated", queryMsg([]byte{1, 2}), ErrMalformed},
		{"query bad cstring", queryMsg(i32(0), []byte("admin.$cmd")), ErrMalformed},
		{"query skip truncated", queryMsg(i32(0), []byte("admin.$cmd\x00"), i32(0)), ErrMalformed},
		{"query missing doc", queryMsg(i32(0), []byte("admin.$cmd\x00"), i32(0), i32(-1)), ErrMalformed},
		{"query bad doc", queryMsg(i32(0), []byte("a.$cmd\x00"), i32(0), i32(-1), noNUL), ErrMalformed},
		{"query bad selector", queryMsg(i32(0), []byte("a.$cmd\x00"), i32(0), i32(-1), body, []byte{9, 0, 0}), ErrMalformed},
		{"query trailing bytes", queryMsg(i32(0), []byte("a.$cmd\x00"), i32(0), i32(-1), body, d1, []byte{0}), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.b)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode error = %v, want %v", err, tt.want)
			}
			if m != nil {
				t.Errorf("Decode returned message %+v with error", m)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode error %T is not *DecodeError", err)
			}
			if len(tt.b) >= HeaderSize && de.Header.OpCode != int32(le.Uint32(tt.b[12:])) {
				t.Errorf("DecodeError.Header = %+v, want opcode from input", de.Header)
			}
		})
	}
}

func TestDecodeUnsupportedOpCode(t *testing.T) {
	b := fixLen(cat(i32(0), i32(42), i32(0), i32(OpCompressed), make([]byte, 9)))
	_, err := Decode(b)
	var ue *UnsupportedOpCodeError
	if !errors.As(err, &ue) || ue.OpCode != OpCompressed {
		t.Fatalf("Decode error = %v, want *UnsupportedOpCodeError{2012}", err)
	}
	var de *DecodeError
	if !errors.As(err, &de) || de.Header.RequestID != 42 {
		t.Fatalf("Decode error = %v, want *DecodeError with request 42", err)
	}
}

func TestDecodeAliasesInput(t *testing.T) {
	body := doc(t, bson.D{{Key: "ping", Value: 1}})
	b := AppendMsg(nil, 1, 0, 0, body)
	m, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if &m.Body[0] != &b[HeaderSize+5] {
		t.Errorf("Body does not alias the input")
	}
	if cap(m.Body) != len(m.Body) {
		t.Errorf("Body capacity %d exceeds its length %d", cap(m.Body), len(m.Body))
	}
}

func TestQueryHandshake(t *testing.T) {
	client := bson.D{{Key: "driver", Value: bson.D{{Key: "name", Value: "mongo-go-driver"}, {Key: "version", Value: "2.10.0"}}},
		{Key: "os", Value: bson.D{{Key: "type", Value: "linux"}}}}
	tests := []struct {
		name  string
		flags int32
		query bson.D
		key   string
	}{
		{"go driver", 0, bson.D{{Key: "isMaster", Value: 1}, {Key: "helloOk", Value: true}, {Key: "client", Value: client}, {Key: "compression", Value: bson.A{}}}, "isMaster"},
		{"shell secondaryOk", 4, bson.D{{Key: "isMaster", Value: 1}}, "isMaster"},
		{"wrapped in $query", 0, bson.D{{Key: "$query", Value: bson.D{{Key: "ismaster", Value: 1}}}, {Key: "$readPreference", Value: bson.D{{Key: "mode", Value: "primaryPreferred"}}}}, "ismaster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(AppendQuery(nil, 3, tt.flags, "admin.$cmd", 0, -1, doc(t, tt.query)))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if m.Header.OpCode != OpQuery || m.NumberToReturn != -1 || m.Flags != tt.flags {
				t.Errorf("Decode = %+v, want OP_QUERY with numberToReturn -1 and flags %d", m, tt.flags)
			}
			if db := m.DB(); db != "admin" {
				t.Errorf("DB() = %q, want admin", db)
			}
			body, seqs := m.Command()
			if k := body.Index(0).Key(); k != tt.key || seqs != nil {
				t.Errorf("Command() first key %q, seqs %v; want %q, nil", k, seqs, tt.key)
			}
		})
	}
}

func TestMessageAccessors(t *testing.T) {
	withDB := doc(t, bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "shop"}})
	noDB := doc(t, bson.D{{Key: "find", Value: "c"}})
	intDB := doc(t, bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: 3}})
	tests := []struct {
		name     string
		m        *Message
		db       string
		moreToCo bool
	}{
		{"msg $db", &Message{Header: Header{OpCode: OpMsg}, Body: withDB}, "shop", false},
		{"msg no $db", &Message{Header: Header{OpCode: OpMsg}, Body: noDB}, "", false},
		{"msg non-string $db", &Message{Header: Header{OpCode: OpMsg}, Body: intDB}, "", false},
		{"msg moreToCome", &Message{Header: Header{OpCode: OpMsg}, FlagBits: MoreToCome, Body: withDB}, "shop", true},
		{"query cmd", &Message{Header: Header{OpCode: OpQuery}, FullCollectionName: "admin.$cmd"}, "admin", false},
		{"query collection", &Message{Header: Header{OpCode: OpQuery}, FullCollectionName: "test.a.b"}, "test", false},
		{"query flags ignored", &Message{Header: Header{OpCode: OpQuery}, Flags: int32(MoreToCome), FullCollectionName: "x"}, "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.DB(); got != tt.db {
				t.Errorf("DB() = %q, want %q", got, tt.db)
			}
			if got := tt.m.MoreToCome(); got != tt.moreToCo {
				t.Errorf("MoreToCome() = %v, want %v", got, tt.moreToCo)
			}
		})
	}
}

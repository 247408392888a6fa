package itest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// replyChecker is a loopback proxy in front of a minimongod: clients talk
// to it, it passes the bytes on both ways and parses every message the
// server sends with the driver's own wire parser, so that every reply of
// the integration suite is checked to be well-formed.
type replyChecker struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	bad    []string
	wg     sync.WaitGroup
}

// startReplyChecker proxies a new loopback port to target.
func startReplyChecker(t testing.TB, target string) *replyChecker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyChecker{ln: ln, target: target}
	go p.accept()
	return p
}

func (p *replyChecker) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *replyChecker) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			io.Copy(server, client)
			server.Close()
		}()
		go func() {
			defer p.wg.Done()
			p.relayReplies(client, server)
			client.Close()
		}()
	}
}

// relayReplies passes the server's messages to the client one by one,
// checking each.
func (p *replyChecker) relayReplies(client, server net.Conn) {
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(server, hdr[:]); err != nil {
			return
		}
		n := int(int32(binary.LittleEndian.Uint32(hdr[:])))
		if n < 16 || n > 64<<20 {
			p.fail("reply length %d", n)
			return
		}
		msg := make([]byte, n)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(server, msg[4:]); err != nil {
			return // the server went away (killed) in the middle of a reply
		}
		if err := checkReply(msg); err != nil {
			p.fail("%v (%d bytes)", err, n)
		}
		if _, err := client.Write(msg); err != nil {
			return
		}
	}
}

func (p *replyChecker) fail(format string, args ...any) {
	p.mu.Lock()
	p.bad = append(p.bad, fmt.Sprintf(format, args...))
	p.mu.Unlock()
}

// close stops the proxy and returns the malformed replies it saw.
func (p *replyChecker) close() []string {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bad...)
}

// checkReply parses one server message with the driver's wiremessage
// functions: an OP_MSG with one valid body document (and well-formed
// document sequences), or an OP_REPLY with its documents.
func checkReply(msg []byte) error {
	length, _, _, op, rem, ok := wiremessage.ReadHeader(msg)
	if !ok || int(length) != len(msg) {
		return fmt.Errorf("bad header")
	}
	switch op {
	case wiremessage.OpMsg:
		flags, rem, ok := wiremessage.ReadMsgFlags(rem)
		if !ok {
			return fmt.Errorf("OP_MSG without flags")
		}
		if flags&wiremessage.ChecksumPresent != 0 {
			rem = rem[:len(rem)-4]
		}
		bodies := 0
		for len(rem) > 0 {
			var st wiremessage.SectionType
			if st, rem, ok = wiremessage.ReadMsgSectionType(rem); !ok {
				return fmt.Errorf("OP_MSG section kind missing")
			}
			switch st {
			case wiremessage.SingleDocument:
				var doc bsoncore.Document
				if doc, rem, ok = wiremessage.ReadMsgSectionSingleDocument(rem); !ok {
					return fmt.Errorf("OP_MSG body section without a document")
				}
				if err := doc.Validate(); err != nil {
					return fmt.Errorf("OP_MSG body: %w", err)
				}
				bodies++
			case wiremessage.DocumentSequence:
				if _, _, rem, ok = wiremessage.ReadMsgSectionDocumentSequence(rem); !ok {
					return fmt.Errorf("OP_MSG document sequence malformed")
				}
			default:
				return fmt.Errorf("OP_MSG section kind %d", st)
			}
		}
		if bodies != 1 {
			return fmt.Errorf("OP_MSG with %d body sections", bodies)
		}
	case wiremessage.OpReply:
		var n int32
		if _, rem, ok = wiremessage.ReadReplyFlags(rem); ok {
			if _, rem, ok = wiremessage.ReadReplyCursorID(rem); ok {
				if _, rem, ok = wiremessage.ReadReplyStartingFrom(rem); ok {
					n, rem, ok = wiremessage.ReadReplyNumberReturned(rem)
				}
			}
		}
		if !ok {
			return fmt.Errorf("OP_REPLY fields truncated")
		}
		docs, _, ok := wiremessage.ReadReplyDocuments(rem)
		if !ok || len(docs) != int(n) {
			return fmt.Errorf("OP_REPLY documents malformed")
		}
		for _, d := range docs {
			if err := d.Validate(); err != nil {
				return fmt.Errorf("OP_REPLY document: %w", err)
			}
		}
	default:
		return fmt.Errorf("reply opcode %d", op)
	}
	return nil
}

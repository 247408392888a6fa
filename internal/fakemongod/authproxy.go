package fakemongod

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// AuthProxy stands in front of a server that has no authentication
// (minimongod) and takes PLAIN logins itself, so that a client connecting
// with a user and password in its URI gets through: it answers each
// saslStart with mechanism PLAIN as a successful login and passes every
// other message, both ways, to and from the server unchanged.
type AuthProxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	logins   []string
}

// StartAuthProxy listens on a free loopback port in front of upstream
// (host:port) and is closed when the test ends.
func StartAuthProxy(t testing.TB, upstream string) *AuthProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &AuthProxy{ln: ln, upstream: upstream}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *AuthProxy) Addr() string { return p.ln.Addr().String() }

// Logins returns the "user:password" of every PLAIN login so far.
func (p *AuthProxy) Logins() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logins...)
}

// Close stops listening; the connections going on end with their clients.
func (p *AuthProxy) Close() { p.ln.Close() }

func (p *AuthProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// serve relays one client connection, message by message.
func (p *AuthProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	var wmu sync.Mutex // the client gets whole messages from both directions
	toClient := func(msg []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := client.Write(msg)
		return err
	}
	go func() {
		defer client.Close()
		for {
			msg, err := readMessage(server)
			if err != nil || toClient(msg) != nil {
				return
			}
		}
	}()
	for {
		msg, err := readMessage(client)
		if err != nil {
			return
		}
		if reply, ok := p.login(msg); ok {
			if toClient(reply) != nil {
				return
			}
			continue
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// login answers msg when it is an OP_MSG saslStart of mechanism PLAIN.
func (p *AuthProxy) login(msg []byte) ([]byte, bool) {
	if len(msg) < 21 || binary.LittleEndian.Uint32(msg[12:]) != opMsg || msg[20] != 0 {
		return nil, false
	}
	cmd := bson.Raw(msg[21:])
	if len(cmd) < 5 || int(binary.LittleEndian.Uint32(cmd)) > len(cmd) {
		return nil, false
	}
	cmd = cmd[:binary.LittleEndian.Uint32(cmd)]
	elems, err := cmd.Elements()
	if err != nil || len(elems) == 0 || elems[0].Key() != "saslStart" {
		return nil, false
	}
	if mech, _ := cmd.Lookup("mechanism").StringValueOK(); !strings.EqualFold(mech, "PLAIN") {
		return nil, false
	}
	_, payload, _ := cmd.Lookup("payload").BinaryOK()
	parts := strings.Split(string(payload), "\x00")
	if len(parts) != 3 {
		return nil, false
	}
	p.mu.Lock()
	p.logins = append(p.logins, parts[1]+":"+parts[2])
	p.mu.Unlock()
	out, err := bson.Marshal(bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: true},
		{Key: "payload", Value: bson.Binary{Data: []byte{}}}, {Key: "ok", Value: 1.0}})
	if err != nil {
		return nil, false
	}
	reply := make([]byte, 21, 21+len(out))
	binary.LittleEndian.PutUint32(reply[4:], binary.LittleEndian.Uint32(msg[4:])+1<<20)
	binary.LittleEndian.PutUint32(reply[8:], binary.LittleEndian.Uint32(msg[4:]))
	binary.LittleEndian.PutUint32(reply[12:], opMsg)
	reply = append(reply, out...)
	binary.LittleEndian.PutUint32(reply[0:], uint32(len(reply)))
	return reply, true
}

// readMessage reads one whole wire message (header included).
func readMessage(r io.Reader) ([]byte, error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	size := int(binary.LittleEndian.Uint32(hdr[:]))
	if size < 16 || size > 48_000_000 {
		return nil, fmt.Errorf("read message: size %d, want 16 to 48000000", size)
	}
	msg := make([]byte, size)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[16:]); err != nil {
		return nil, err
	}
	return msg, nil
}

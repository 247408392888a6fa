package itest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wire"
)

// malformedCount is how many hostile messages and commands
// TestMalformedMessagesAndCommands sends.
const malformedCount = 1000

// 1,000 random malformed messages and nonsensical commands: the server
// answers or closes the connection, never crashes, and still answers
// ping afterwards.
func TestMalformedMessagesAndCommands(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "enableTestCommands=1")
	must(s.db("fuzz").Collection("c").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, 2}}}, bson.D{{Key: "_id", Value: 2}}}))(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	var c net.Conn
	closed := 0
	for i := 0; i < malformedCount; i++ {
		if c == nil {
			var err error
			if c, err = net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port)); err != nil {
				t.Fatalf("message %d: dial: %v", i, err)
			}
		}
		noErr(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		msg := hostileMessage(rng, int32(i))
		if _, err := c.Write(msg); err != nil || !replyDue(msg) {
			noErr(t, c.Close()) // a reply would never come: the server waits for more
			c, closed = nil, closed+1
			continue
		}
		if _, _, err := readReply(t, c); err != nil {
			noErr(t, c.Close()) // the server closed it (or a reply is not due)
			c, closed = nil, closed+1
		}
		select {
		case <-s.done:
			t.Fatalf("minimongod exited after message %d (%x)\n%s", i, msg[:min(len(msg), 64)], tail(s.log.String(), 4000))
		default:
		}
	}
	if c != nil {
		noErr(t, c.Close())
	}
	// The server still serves: a ping, and a write read back from a
	// collection no hostile command names.
	s.run(t, "admin", bson.D{{Key: "ping", Value: 1}})
	after := s.db("fuzz").Collection("afterwards")
	must(after.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}))(t)
	if n, err := after.CountDocuments(ctx, bson.D{}); err != nil || n != 2 {
		t.Fatalf("count after the hostile messages: %d, %v; want 2", n, err)
	}
	t.Logf("%d messages, %d connections ended (closed by the server, or no reply due)", malformedCount, closed)
}

// hostileMessage returns a random malformed wire message or a well-framed
// command with random arguments.
func hostileMessage(rng *rand.Rand, id int32) []byte {
	cmd := randomCommand(rng)
	body, err := bson.Marshal(cmd)
	if err != nil {
		panic(err) // randomCommand builds only marshalable commands
	}
	msg := wire.AppendMsg(nil, id, 0, 0, body)
	switch rng.IntN(6) {
	case 0: // flip bytes after the header
		for k := 0; k < 1+rng.IntN(4); k++ {
			msg[16+rng.IntN(len(msg)-16)] ^= byte(1 + rng.IntN(255))
		}
	case 1: // random bytes with a plausible length
		junk := make([]byte, 16+rng.IntN(200))
		for k := range junk {
			junk[k] = byte(rng.IntN(256))
		}
		binary.LittleEndian.PutUint32(junk, uint32(len(junk)))
		if rng.IntN(2) == 0 {
			binary.LittleEndian.PutUint32(junk[12:], 2013)
		}
		return junk
	case 2: // a wrong length
		binary.LittleEndian.PutUint32(msg, uint32(rng.IntN(len(msg)*2)))
		return msg[:min(len(msg), 4+rng.IntN(len(msg)))]
	case 3: // unknown flag bits or an unknown opcode
		if rng.IntN(2) == 0 {
			binary.LittleEndian.PutUint32(msg[16:], uint32(rng.IntN(1<<16)))
		} else {
			binary.LittleEndian.PutUint32(msg[12:], uint32([]int{1, 2001, 2002, 2005, 2012, 9999}[rng.IntN(6)]))
		}
	}
	return msg
}

var hostileNames = []string{"find", "insert", "update", "delete", "aggregate", "count", "distinct", "explain",
	"createIndexes", "dropIndexes", "findAndModify", "getMore", "killCursors", "profile", "listCollections",
	"collStats", "create", "drop", "serverStatus", "getParameter", "setParameter", "currentOp", "collMod", "hello"}

var hostileFields = []string{"filter", "documents", "updates", "deletes", "pipeline", "query", "key", "sort",
	"projection", "limit", "skip", "batchSize", "hint", "indexes", "index", "cursor", "update", "remove", "new",
	"upsert", "writeConcern", "collection", "q", "u", "verbosity", "slowms", "multi", "$db"}

// randomCommand is a command with a random name and random arguments.
func randomCommand(rng *rand.Rand) bson.D {
	name := hostileNames[rng.IntN(len(hostileNames))]
	cmd := bson.D{{Key: name, Value: randomValue(rng, 2)}}
	if rng.IntN(4) != 0 {
		cmd[0].Value = "c"
	}
	for k := 0; k < rng.IntN(4); k++ {
		cmd = append(cmd, bson.E{Key: hostileFields[rng.IntN(len(hostileFields))], Value: randomValue(rng, 3)})
	}
	if rng.IntN(10) != 0 {
		cmd = append(cmd, bson.E{Key: "$db", Value: []string{"fuzz", "admin", "fuzz"}[rng.IntN(3)]})
	}
	return cmd
}

// randomValue is a random BSON value, nesting at most depth levels.
func randomValue(rng *rand.Rand, depth int) any {
	n := rng.IntN(12)
	if depth == 0 {
		n %= 8
	}
	switch n {
	case 0:
		return rng.IntN(5) - 2
	case 1:
		return []float64{math.NaN(), math.Inf(-1), -0.5, 1e300}[rng.IntN(4)]
	case 2:
		return []string{"", "x", "$a", "a.b", "$$ROOT", "system.x", "_id_"}[rng.IntN(7)]
	case 3:
		return nil
	case 4:
		return rng.IntN(2) == 0
	case 5:
		return int64(math.MaxInt64 - rng.IntN(2))
	case 6:
		return bson.Binary{Data: []byte{1, 2}}
	case 7:
		return bson.Regex{Pattern: "(", Options: "z"}
	case 8, 9:
		d := bson.D{}
		for k := 0; k < rng.IntN(3)+1; k++ {
			keys := []string{"a", "$set", "$gt", "$in", "_id", "$match", "$group", "a.1", "$each", "key", "name", "q", "u"}
			d = append(d, bson.E{Key: keys[rng.IntN(len(keys))], Value: randomValue(rng, depth-1)})
		}
		return d
	}
	a := bson.A{}
	for k := 0; k < rng.IntN(3); k++ {
		a = append(a, randomValue(rng, depth-1))
	}
	return a
}

// replyDue reports whether the server owes msg a reply: it is complete
// (its length field matches) and has no moreToCome flag.
func replyDue(msg []byte) bool {
	if len(msg) < 20 || int(binary.LittleEndian.Uint32(msg)) != len(msg) {
		return false
	}
	op := binary.LittleEndian.Uint32(msg[12:])
	return op != 2013 || binary.LittleEndian.Uint32(msg[16:])&2 == 0
}

// Command cfloord is floord in C: the same stored replies, sent by a C
// thread per connection with blocking reads and writes (mongod's own
// model), and no Go scheduler on the way. Its CPU per request is what the
// machine's network and wake-ups cost a server at the benchmark's pace,
// whatever the language; floord's figure minus this is what Go's runtime
// adds.
//
//	cfloord -port 27999
package main

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lpthread
#include <stdlib.h>
int cfloor_serve(int port, const char *find, int nfind, const char *hello, int nhello, const char *legacy, int nlegacy);
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wire"
)

func main() {
	port := flag.Int("port", 0, "loopback port to listen on")
	flag.Parse()
	doc := must(bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "pad", Value: make([]byte, 970)}}))
	found := must(bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: bson.A{bson.Raw(doc)}},
		{Key: "id", Value: int64(0)}, {Key: "ns", Value: "bench.c"}}}, {Key: "ok", Value: 1.0}}))
	hello := must(bson.Marshal(bson.D{{Key: "ismaster", Value: true}, {Key: "helloOk", Value: true},
		{Key: "maxBsonObjectSize", Value: int32(wire.MaxBSONObjectSize)}, {Key: "maxMessageSizeBytes", Value: int32(wire.DefaultMaxMessageSize)},
		{Key: "maxWriteBatchSize", Value: int32(100000)}, {Key: "localTime", Value: time.Now()},
		{Key: "logicalSessionTimeoutMinutes", Value: int32(30)}, {Key: "connectionId", Value: int32(1)},
		{Key: "minWireVersion", Value: int32(0)}, {Key: "maxWireVersion", Value: int32(9)}, {Key: "readOnly", Value: false},
		{Key: "ok", Value: 1.0}}))
	// Every find gets found; any other OP_MSG command hello's answer (the
	// driver's handshake and heartbeats); OP_QUERY its legacy reply.
	find := wire.AppendMsg(nil, 1, 0, 0, found)
	helloMsg := wire.AppendMsg(nil, 1, 0, 0, hello)
	legacy := wire.AppendReply(nil, 1, 0, 8, 0, 0, hello)
	cs := func(b []byte) *C.char { return (*C.char)(C.CBytes(b)) }
	rc := C.cfloor_serve(C.int(*port), cs(find), C.int(len(find)), cs(helloMsg), C.int(len(helloMsg)), cs(legacy), C.int(len(legacy)))
	fmt.Fprintf(os.Stderr, "cfloord: cannot serve on port %d (errno %d)\n", *port, int(rc))
	os.Exit(1)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

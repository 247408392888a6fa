// Package floorreply builds the stored replies of the benchmarks' floor
// servers (floord and cfloord), so that both answer with the same bytes.
package floorreply

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wire"
)

// Doc is the 1 KB document a find is answered with: {_id: id, pad}. Every
// id gives a document of the same size.
func Doc(id int32) []byte {
	return must(bson.Marshal(bson.D{{Key: "_id", Value: id}, {Key: "pad", Value: make([]byte, 970)}}))
}

// Found is a find's reply with doc as its only result and no cursor left.
func Found(doc []byte) []byte {
	return must(bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: bson.A{bson.Raw(doc)}},
		{Key: "id", Value: int64(0)}, {Key: "ns", Value: "bench.c"}}}, {Key: "ok", Value: 1.0}}))
}

// Hello is a MongoDB 4.4 standalone's answer to hello (and isMaster) on
// connection connID.
func Hello(connID int32) []byte {
	return must(bson.Marshal(bson.D{{Key: "ismaster", Value: true}, {Key: "helloOk", Value: true},
		{Key: "maxBsonObjectSize", Value: int32(wire.MaxBSONObjectSize)}, {Key: "maxMessageSizeBytes", Value: int32(wire.DefaultMaxMessageSize)},
		{Key: "maxWriteBatchSize", Value: int32(100000)}, {Key: "localTime", Value: time.Now()},
		{Key: "logicalSessionTimeoutMinutes", Value: int32(30)}, {Key: "connectionId", Value: connID},
		{Key: "minWireVersion", Value: int32(0)}, {Key: "maxWireVersion", Value: int32(9)}, {Key: "readOnly", Value: false},
		{Key: "ok", Value: 1.0}}))
}

// Must returns b, or panics with err: the replies are built from constants.
func Must(b []byte, err error) []byte { return must(b, err) }

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

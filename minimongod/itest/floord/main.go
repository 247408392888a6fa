// Command floord is the floor of minimongod's wire benchmarks: a server
// that speaks just enough of the wire protocol for the Go driver's
// handshake, FindOne and InsertMany, answering every find with the same
// stored 1 KB document and every insert with its count of documents, storing
// nothing. It reads and decodes each request as minimongod does (wire
// package, net.Conn through the Go scheduler) and does nothing else, so its
// CPU per request is what any Go server pays for the network and the
// runtime at the benchmark's pace, and its insert time what the client and
// the transfer cost; minimongod's figures minus these are its own work.
// Like minimongod it keeps Go's scheduler monitor awake (package sysmon).
//
// With -work it spends that much CPU on each find first, standing for a
// server's own work: the difference to floord without it is what the work
// costs beyond itself (on a virtual machine, a client that has gone idle
// meanwhile is dearer to wake).
//
//	floord -port 27999 [-work 10us]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/itest/floorreply"
	"wtd/minimongod/sysmon"
	"wtd/minimongod/wire"
)

func main() {
	port := flag.Int("port", 0, "loopback port to listen on")
	flag.DurationVar(&work, "work", 0, "CPU time to spend on each find before answering (a busy loop): what that much work costs a server at the benchmark's pace")
	flag.Parse()
	if off := sysmon.KeepAwake(); off != "" {
		fmt.Fprintln(os.Stderr, "floord: Go's scheduler monitor sleeps between requests:", off)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	found := floorreply.Found(floorreply.Doc(1))
	for id := int32(1); ; id++ {
		nc, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go serve(nc, id, found)
	}
}

// work is how long each find keeps the CPU busy before its answer (-work).
var work time.Duration

// serve answers one connection's requests in order until it closes;
// every find gets found, a reply built once.
func serve(nc net.Conn, connID int32, found []byte) {
	defer nc.Close()
	if tc, ok := nc.(*net.TCPConn); ok {
		if err := tc.SetNoDelay(true); err != nil {
			return
		}
	}
	br := bufio.NewReader(nc)
	var buf, out []byte
	for reqID := int32(1); ; reqID++ {
		msg, b, err := wire.ReadMessage(br, buf, wire.DefaultMaxMessageSize)
		buf = b
		if err != nil {
			return
		}
		body, seqs := msg.Command()
		first, err := body.IndexErr(0)
		if err != nil {
			return
		}
		var reply []byte
		switch first.Key() {
		case "find":
			reply = found
			if work > 0 {
				for t0 := time.Now(); time.Since(t0) < work; {
				}
			}
		case "insert":
			reply = inserted(body, seqs)
		default:
			reply = answer(first.Key(), connID)
		}
		if msg.Header.OpCode == wire.OpQuery {
			out = wire.AppendReply(out[:0], reqID, msg.Header.RequestID, 8, 0, 0, reply)
		} else {
			out = wire.AppendMsg(out[:0], reqID, msg.Header.RequestID, 0, reply)
		}
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}

// inserted answers an insert command as if it had stored its documents,
// from a document sequence or the documents array: {n, ok: 1}.
func inserted(body bson.Raw, seqs []wire.Sequence) []byte {
	n := 0
	for _, sq := range seqs {
		if sq.Identifier == "documents" {
			n += len(sq.Docs)
		}
	}
	if docs, err := body.LookupErr("documents"); err == nil {
		if vals, err := docs.Array().Values(); err == nil {
			n += len(vals)
		}
	}
	return floorreply.Must(bson.Marshal(bson.D{{Key: "n", Value: int32(n)}, {Key: "ok", Value: 1.0}}))
}

// answer returns the reply to a command other than find: a 4.4
// standalone's handshake, or {ok: 1}.
func answer(name string, connID int32) []byte {
	switch name {
	case "hello", "isMaster", "ismaster":
		return floorreply.Hello(connID)
	}
	return floorreply.Must(bson.Marshal(bson.D{{Key: "ok", Value: 1.0}}))
}

// Command cfloord is floord in C: the same stored replies, sent by a C
// thread per connection with blocking reads and writes (mongod's own
// model), and no Go scheduler on the way. Its CPU per request is what the
// machine's network and wake-ups cost a server at the benchmark's pace,
// whatever the language; floord's figure minus this is what Go's runtime
// adds.
//
// With -wt DIR it opens WiredTiger there, loads -docs documents of the
// stored one's size (_id 0, 1, ...; int32 keys) and answers each find by
// {_id: n} with document n, read by the connection's own cursor: a server
// in C that does a point read's WiredTiger work and nothing else.
//
//	cfloord -port 27999 [-wt DIR [-docs 50000]]
package main

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lpthread -lwiredtiger
#include <stdlib.h>
#include <wiredtiger.h>
WT_SESSION *cfloor_open(const char *home, const char *config, int *err);
int cfloor_load(WT_SESSION *s, const char *docs, int n, int len);
int cfloor_serve(int port, const char *find, int nfind, const char *hello, int nhello, const char *legacy, int nlegacy, int off, int dlen);
*/
import "C"

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"wtd/minimongod/itest/floorreply"
	"wtd/minimongod/wire"
)

func main() {
	port := flag.Int("port", 0, "loopback port to listen on")
	home := flag.String("wt", "", "WiredTiger home directory: answer finds from a table there")
	docs := flag.Int("docs", 50000, "documents to load with -wt")
	flag.Parse()
	doc := floorreply.Doc(0)
	found := floorreply.Found(doc)
	hello := floorreply.Hello(1)
	// Every find gets found; any other OP_MSG command hello's answer (the
	// driver's handshake and heartbeats); OP_QUERY its legacy reply.
	find := wire.AppendMsg(nil, 1, 0, 0, found)
	helloMsg := wire.AppendMsg(nil, 1, 0, 0, hello)
	legacy := wire.AppendReply(nil, 1, 0, 8, 0, 0, hello)
	cs := func(b []byte) *C.char { return (*C.char)(C.CBytes(b)) }
	if *home != "" {
		if err := load(*home, *docs, len(doc)); err != nil {
			fmt.Fprintln(os.Stderr, "cfloord:", err)
			os.Exit(1)
		}
	}
	rc := C.cfloor_serve(C.int(*port), cs(find), C.int(len(find)), cs(helloMsg), C.int(len(helloMsg)), cs(legacy), C.int(len(legacy)),
		C.int(bytes.Index(find, doc)), C.int(len(doc)))
	fmt.Fprintf(os.Stderr, "cfloord: cannot serve on port %d (errno %d)\n", *port, int(rc))
	os.Exit(1)
}

// load opens WiredTiger in home and writes n documents of size bytes,
// {_id: i, pad: ...} under key i.
func load(home string, n, size int) error {
	all := make([]byte, 0, n*size)
	for i := range n {
		d := floorreply.Doc(int32(i))
		if len(d) != size {
			return fmt.Errorf("document %d has %d bytes, want %d", i, len(d), size)
		}
		all = append(all, d...)
	}
	h, config := C.CString(home), C.CString("create,cache_size=1G,statistics=(fast),eviction=(threads_min=4,threads_max=4)")
	var e C.int
	s := C.cfloor_open(h, config, &e)
	if s == nil {
		return fmt.Errorf("open WiredTiger in %s: error %d", home, int(e))
	}
	p := C.CBytes(all)
	defer C.free(p)
	if r := C.cfloor_load(s, (*C.char)(p), C.int(n), C.int(size)); r != 0 {
		return fmt.Errorf("load %d documents: error %d", n, int(r))
	}
	return nil
}

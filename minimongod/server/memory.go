package server

import (
	"bufio"
	"encoding/binary"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// Connection buffers: each connection reads through a pooled bufio.Reader
// and keeps its message and reply buffers only while they are small, so
// that idle connections hold little memory and a burst of large messages
// is returned once it is over.
const (
	readerSize = 64 << 10
	// keepBufBytes is the largest buffer a connection keeps between
	// requests.
	keepBufBytes = 256 << 10
)

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readerSize) }}

// getReader returns a pooled reader on r.
func getReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// putReader returns br to the pool.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

// bigBufs holds buffers larger than keepBufBytes that connections have
// finished with (*[]byte), so that a stream of large messages (batch
// inserts) reads into them instead of allocating and zeroing megabytes per
// message (bufferFor, which knows the size from the length prefix). The pool empties itself over two garbage collections when large
// messages stop.
var bigBufs sync.Pool

// trimToPool keeps b when it is small; a large one goes to bigBufs.
func trimToPool(b []byte) []byte {
	if cap(b) > keepBufBytes {
		bigBufs.Put(&b)
		return nil
	}
	return b
}

// replyBuffer returns b emptied. It takes nothing from bigBufs: a reply's
// size is not known before it is built, and a pooled buffer taken for every
// small reply would keep the pool alive as long as requests come.
func replyBuffer(b []byte) []byte { return b[:0] }

// bufferFor returns buf, or a pooled buffer when the next message is
// larger than buf and than keepBufBytes. It waits for the message's length
// prefix as reading the message would; a pooled buffer is memory already
// allocated, so a message that announces a large length and never comes
// costs nothing more than before.
func bufferFor(br *bufio.Reader, buf []byte) []byte {
	hdr, err := br.Peek(4)
	if err != nil {
		return buf // reading the message meets the same error
	}
	n := int(int32(binary.LittleEndian.Uint32(hdr)))
	if n <= cap(buf) || n <= keepBufBytes {
		return buf
	}
	if p, ok := bigBufs.Get().(*[]byte); ok && cap(*p) >= n {
		return *p
	}
	return buf
}

// memoryLoop hands memory the heap no longer uses back to the system once
// the server has had no request for a while and at least releaseMinBytes
// lie idle: Go's own scavenger returns it only slowly, and the forced
// collection this takes must not fall among requests being measured.
func (s *Server) memoryLoop() {
	defer s.bgDone.Done()
	const releaseMinBytes = 32 << 20
	var ms runtime.MemStats
	seen := s.stats.numRequests.Load()
	for {
		select {
		case <-s.bgStop:
			return
		case <-time.After(5 * time.Second):
		}
		// A request since the last look: not idle yet.
		if n := s.stats.numRequests.Load(); n != seen {
			seen = n
			continue
		}
		runtime.ReadMemStats(&ms)
		if ms.HeapIdle-ms.HeapReleased >= releaseMinBytes {
			debug.FreeOSMemory()
		}
	}
}

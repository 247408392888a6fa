package server

import (
	"bufio"
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

// trim drops b when it grew past keepBufBytes.
func trim(b []byte) []byte {
	if cap(b) > keepBufBytes {
		return nil
	}
	return b
}

// memoryLoop hands memory the heap no longer uses back to the system,
// every few seconds once at least releaseMinBytes lie idle: Go's own
// scavenger returns it only slowly.
func (s *Server) memoryLoop() {
	defer s.bgDone.Done()
	const releaseMinBytes = 32 << 20
	var ms runtime.MemStats
	for {
		select {
		case <-s.bgStop:
			return
		case <-time.After(5 * time.Second):
		}
		runtime.ReadMemStats(&ms)
		if ms.HeapIdle-ms.HeapReleased >= releaseMinBytes {
			debug.FreeOSMemory()
		}
	}
}

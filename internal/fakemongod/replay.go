package fakemongod

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/ftdc"
)

// Replay is the serverStatus of a real FTDC file, sample by sample, as
// ReplayServerStatus serves it.
type Replay struct {
	Samples int // the samples the file holds with a serverStatus
	Metrics int // the most metrics (FTDC's count) of a chunk of them

	mu      sync.Mutex
	replies []bson.Raw // serverStatus documents with ok: 1
	next    int
}

// ReplayServerStatus makes the server answer serverStatus with the
// serverStatus samples of the FTDC file at path in turn, starting again
// after the last. The documents are rebuilt from the file's chunks
// (ftdc.Chunk.Doc) before the first answer, so serving one costs a copy.
func (s *Server) ReplayServerStatus(path string) (*Replay, error) {
	r, err := ftdc.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rp := &Replay{}
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("replay %s: %w", path, err)
		}
		c, ok := it.(*ftdc.Chunk)
		if !ok || c.Samples == 0 {
			continue
		}
		added := false
		for i := range c.Samples {
			doc, err := c.Doc(i)
			if err != nil {
				return nil, fmt.Errorf("replay %s: chunk at %d: %w", path, c.Offset, err)
			}
			ss := serverStatusOf(doc)
			if ss == nil {
				break
			}
			rp.replies = append(rp.replies, withOK(ss))
			added = true
		}
		if added {
			rp.Metrics = max(rp.Metrics, len(c.Names))
		}
	}
	if len(rp.replies) == 0 {
		return nil, fmt.Errorf("replay %s: no serverStatus samples", path)
	}
	rp.Samples = len(rp.replies)
	s.mu.Lock()
	s.raw["serverstatus"] = rp.reply
	delete(s.handlers, "serverstatus")
	s.mu.Unlock()
	return rp, nil
}

// reply returns the next sample.
func (rp *Replay) reply(bson.Raw) bson.Raw {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	d := rp.replies[rp.next]
	rp.next = (rp.next + 1) % len(rp.replies)
	return d
}

// serverStatusOf returns a sample's serverStatus: at the top, or in a role
// section of 8.0's sharded layout.
func serverStatusOf(doc bson.Raw) bson.Raw {
	if v, err := doc.LookupErr("serverStatus"); err == nil {
		if d, ok := v.DocumentOK(); ok {
			return d
		}
	}
	for _, role := range []string{"shard", "router", "common"} {
		if v, err := doc.LookupErr(role, "serverStatus"); err == nil {
			if d, ok := v.DocumentOK(); ok {
				return d
			}
		}
	}
	return nil
}

// withOK returns a copy of doc with ok: 1.0 appended.
func withOK(doc bson.Raw) bson.Raw {
	out := append([]byte(nil), doc[:len(doc)-1]...)
	out = append(out, 0x01, 'o', 'k', 0)
	out = binary.LittleEndian.AppendUint64(out, math.Float64bits(1))
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}

// Sample returns the document served for sample i (0 <= i < Samples).
func (rp *Replay) Sample(i int) bson.Raw { return rp.replies[i] }

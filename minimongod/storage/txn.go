package storage

// delta is a pending change of a collection's counts, applied on commit.
type delta struct{ n, size int64 }

func (s *Session) addDelta(c *Collection, n, size int64) {
	if s.pending == nil {
		s.pending = map[*Collection]delta{}
	}
	d := s.pending[c]
	d.n += n
	d.size += size
	s.pending[c] = d
}

// Begin starts a transaction; every write goes through one.
func (s *Session) Begin() error { return s.ws.Begin() }

// Commit commits; with sync it waits until the journal is on disk.
func (s *Session) Commit(sync bool) error {
	if err := s.ws.Commit(sync); err != nil {
		s.pending = nil
		return err
	}
	for c, d := range s.pending {
		c.numRecords.Add(d.n)
		c.dataSize.Add(d.size)
	}
	clear(s.pending)
	return nil
}

// Rollback abandons the transaction and its pending count changes.
func (s *Session) Rollback() error {
	clear(s.pending)
	return s.ws.Rollback()
}

package wt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTest(t testing.TB) *Conn {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dir, "create,cache_size=64M,statistics=(fast),log=(enabled=true,path=journal)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close("") })
	return c
}

func key(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

func TestCRUDAndIteration(t *testing.T) {
	c := openTest(t)
	s, err := c.OpenSession("")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create("table:t", "key_format=u,value_format=u"); err != nil {
		t.Fatal(err)
	}
	cur, err := s.Cursor("table:t", true)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := cur.Insert(key(i), []byte(fmt.Sprint("v", i))); err != nil {
			t.Fatal(err)
		}
	}
	v, err := cur.Search(key(42))
	if err != nil || string(v) != "v42" {
		t.Fatalf("search 42: %q %v", v, err)
	}
	if _, err := cur.Search(key(1000)); err != ErrNotFound {
		t.Fatalf("search missing: %v", err)
	}
	noOver, err := s.Cursor("table:t", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := noOver.Insert(key(5), []byte("x")); !IsDuplicateKey(err) {
		t.Fatalf("duplicate insert: %v", err)
	}
	if err := cur.Remove(key(7)); err != nil {
		t.Fatal(err)
	}
	exact, err := cur.SearchNear(key(7))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := cur.Key()
	if exact == 0 || (!bytes.Equal(k, key(6)) && !bytes.Equal(k, key(8))) {
		t.Fatalf("search_near 7: exact %d key %x", exact, k)
	}
	cur.Reset()
	n := 0
	for cur.Next() == nil {
		n++
	}
	if n != 99 {
		t.Fatalf("iterated %d records, want 99", n)
	}
}

func TestTransactionRollback(t *testing.T) {
	c := openTest(t)
	s, _ := c.OpenSession("")
	s.Create("table:t", "key_format=u,value_format=u")
	cur, _ := s.Cursor("table:t", true)
	s.Begin()
	cur.Insert(key(1), []byte("a"))
	if err := s.Rollback(); err != nil {
		t.Fatal(err)
	}
	cur, _ = s.Cursor("table:t", true)
	if _, err := cur.Search(key(1)); err != ErrNotFound {
		t.Fatalf("after rollback: %v", err)
	}
}

func TestStatsAndReconfigure(t *testing.T) {
	c := openTest(t)
	s, _ := c.OpenSession("")
	stats, err := s.Stats("statistics:")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range stats {
		if st.Desc == "cache: maximum bytes configured" {
			found = true
			if st.Value != 64<<20 {
				t.Errorf("maximum bytes configured = %d", st.Value)
			}
		}
	}
	if !found || len(stats) < 100 {
		t.Fatalf("%d stats, cache max found %v", len(stats), found)
	}
	if err := c.Reconfigure("eviction_target=70"); err != nil {
		t.Fatal(err)
	}
	err = c.Reconfigure("no_such_key=1")
	if err == nil || !strings.Contains(err.Error(), "unknown configuration key") {
		t.Fatalf("bad reconfigure: %v", err)
	}
}

func TestDropBusy(t *testing.T) {
	c := openTest(t)
	s1, _ := c.OpenSession("")
	s2, _ := c.OpenSession("")
	s1.Create("table:d", "key_format=u,value_format=u")
	if _, err := s2.Cursor("table:d", true); err != nil {
		t.Fatal(err)
	}
	if err := s1.Drop("table:d", ""); !IsBusy(err) {
		t.Fatalf("drop with open cursor elsewhere: %v", err)
	}
	s2.CloseCursors("table:d")
	if err := s1.Drop("table:d", ""); err != nil {
		t.Fatal(err)
	}
}

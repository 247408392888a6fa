package hostctl

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLogTail(t *testing.T) {
	var file bytes.Buffer
	lt := newLogTail(&file, 3)
	fmt.Fprint(lt, "one\ntwo\nthr")
	fmt.Fprint(lt, "ee\nfour\nfive\npart")
	if d := cmp.Diff([]string{"three", "four", "five", "part"}, lt.Last(-1)); d != "" {
		t.Errorf("Last(-1) (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"five", "part"}, lt.Last(2)); d != "" {
		t.Errorf("Last(2) (-want +got):\n%s", d)
	}
	if got, want := file.String(), "one\ntwo\nthree\nfour\nfive\npart"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestLogTailKeepsLinesWhenFileFails(t *testing.T) {
	lt := newLogTail(failingWriter{}, 5)
	n, err := lt.Write([]byte("a\nb\n"))
	if n != 4 || err != nil {
		t.Fatalf("Write = %d, %v; want 4, nil", n, err)
	}
	if d := cmp.Diff([]string{"a", "b"}, lt.Last(5)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if lt.Err() == nil {
		t.Error("Err() = nil after a failed file write")
	}
}

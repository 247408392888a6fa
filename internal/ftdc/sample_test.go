package ftdc

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
)

// TestChunkDoc rebuilds samples of every chunk of real files and extracts
// their metrics again: each must be the chunk's value for that sample.
func TestChunkDoc(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*--metrics.*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no real files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			chunks := 0
			for {
				it, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				c, ok := it.(*Chunk)
				if !ok {
					continue
				}
				chunks++
				for _, s := range []int{0, c.Samples / 2, c.Samples - 1} {
					doc, err := c.Doc(s)
					if err != nil {
						t.Fatal(err)
					}
					if err := doc.Validate(); err != nil {
						t.Fatalf("chunk at %d sample %d: %v", c.Offset, s, err)
					}
					var x extractor
					if err := x.extract(doc); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(x.names, c.Names) {
						t.Fatalf("chunk at %d sample %d: the rebuilt document has other metrics", c.Offset, s)
					}
					for m := range c.Names {
						if got, want := x.values[m], c.Values[m*c.Samples+s]; got != want {
							t.Fatalf("chunk at %d sample %d: %s = %d, want %d", c.Offset, s, c.Names[m], got, want)
						}
					}
				}
			}
			if chunks == 0 {
				t.Fatal("no chunks")
			}
			if _, err := (&Chunk{Samples: 1}).Doc(1); err == nil {
				t.Error("Doc(1) of a chunk of 1 sample: no error")
			}
		})
	}
}

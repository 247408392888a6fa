package ftdc

import (
	"bytes"
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pythonWithPymongo is Debian's python3, which python3-pymongo (a test
// dependency) installs bson for.
const pythonWithPymongo = "/usr/bin/python3"

// pythonValues runs testdata/ftdc_values.py, a decoder written apart from
// this package, on path for names: one line a sample.
func pythonValues(t *testing.T, path string, names []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pythonWithPymongo, append([]string{"testdata/ftdc_values.py", path}, names...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ftdc_values.py %s: %v\n%s", path, err, stderr.String())
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// goValues gives the same lines from the Reader.
func goValues(chunks []*Chunk, names []string) []string {
	var lines []string
	field := make([]string, len(names))
	for _, c := range chunks {
		idx := make([]int, len(names))
		for i, n := range names {
			idx[i] = slices.Index(c.Paths, n)
		}
		for s := 0; s < c.Samples; s++ {
			for i, m := range idx {
				field[i] = "-"
				if m >= 0 {
					field[i] = itoa(c.Metric(m)[s])
				}
			}
			lines = append(lines, strings.Join(field, "\t"))
		}
	}
	return lines
}

// pickNames picks n of the metric paths found in chunks at random, seeded
// by seed: n-2 among those that change within a chunk, the rest among all.
func pickNames(chunks []*Chunk, seed string, n int) []string {
	var all, moving []string
	have, moves := map[string]bool{}, map[string]bool{}
	for _, c := range chunks {
		for m, p := range c.Paths {
			if !have[p] {
				have[p] = true
				all = append(all, p)
			}
			col := c.Metric(m)
			if !moves[p] && slices.ContainsFunc(col, func(v int64) bool { return v != col[0] }) {
				moves[p] = true
				moving = append(moving, p)
			}
		}
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	rng := rand.New(rand.NewPCG(h.Sum64(), 20))
	rng.Shuffle(len(moving), func(i, j int) { moving[i], moving[j] = moving[j], moving[i] })
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	picked := slices.Clone(moving[:min(n-2, len(moving))])
	for _, p := range all {
		if len(picked) == n {
			break
		}
		if !slices.Contains(picked, p) {
			picked = append(picked, p)
		}
	}
	return picked
}

func compareWithPython(t *testing.T, path string) {
	t.Helper()
	chunks := readAll(t, path).chunks
	names := pickNames(chunks, filepath.Base(path), 5)
	want := pythonValues(t, path, names)
	got := goValues(chunks, names)
	if len(got) != len(want) {
		t.Fatalf("%v: %d samples, the Python decoder has %d", names, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%v, sample %d: %q, the Python decoder has %q", names, i, got[i], want[i])
		}
	}
	t.Logf("%v: %d samples equal", names, len(got))
}

func TestValuesAgreeWithAnIndependentDecoder(t *testing.T) {
	for _, f := range corpus {
		t.Run(strings.SplitN(f.path, "/", 2)[0], func(t *testing.T) {
			compareWithPython(t, "testdata/"+f.path)
		})
	}
}

func TestWrittenFileAgreesWithAnIndependentDecoder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.2023-11-14T22-13-20Z-00000")
	var buf bytes.Buffer
	w := NewWriter(&buf)
	writeTestSeries(t, w, 0, 1000)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, buf.Bytes())
	compareWithPython(t, path)
	// And every metric, not just 5.
	_, names, _ := testSample(999)
	want := pythonValues(t, path, names)
	got := goValues(readAll(t, path).chunks, names)
	if !slices.Equal(got, want) {
		t.Fatalf("the Python decoder disagrees on the written file:\n%v\n%v", got[:3], want[:3])
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

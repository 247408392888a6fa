package playbooks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsStandAlone: every shipped playbook is explained in
// docs/playbooks.md, and the project's docs send no reader to material
// outside the repository.
func TestDocsStandAlone(t *testing.T) {
	doc, err := os.ReadFile("../docs/playbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.lua")
	for _, f := range files {
		if !strings.Contains(string(doc), "## "+f+" ") {
			t.Errorf("docs/playbooks.md has no section for %s", f)
		}
	}
	docs, _ := filepath.Glob("../docs/*.md")
	docs = append(docs, "../README.md")
	docs = append(docs, files...)
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"SEEDS.md", "../shared", "DESIGN.md", "STYLE.md"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s refers to %s, which is not part of the project", d, bad)
			}
		}
	}
}

// docs/ARCHITECTURE.md stays short and true: under 300 lines, and every
// path it names (in backquotes, or first on a line of its package map)
// exists.
func TestArchitectureNamesRealPaths(t *testing.T) {
	b, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n >= 300 {
		t.Errorf("docs/ARCHITECTURE.md has %d lines, want under 300", n)
	}
	var paths []string
	for _, m := range regexp.MustCompile("`([a-z][a-zA-Z0-9_.-]*(?:/[a-zA-Z0-9_.-]+)+)`").FindAllStringSubmatch(text, -1) {
		paths = append(paths, m[1])
	}
	inMap := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inMap = !inMap
			continue
		}
		if f := strings.Fields(line); inMap && len(f) > 0 {
			for _, p := range strings.Split(strings.TrimSuffix(f[0], ","), ",") {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) < 40 {
		t.Fatalf("only %d paths found in docs/ARCHITECTURE.md", len(paths))
	}
	for _, p := range paths {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "/..."), "/")
		if _, err := os.Stat(filepath.Join("..", p)); err != nil {
			t.Errorf("docs/ARCHITECTURE.md names %s, which does not exist", p)
		}
	}
}

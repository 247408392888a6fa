package playbooks

import (
	"os"
	"path/filepath"
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

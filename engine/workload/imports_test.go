package workload

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNothingOfWtd: imports point down, engine -> engine/workload,
// so the generator imports no package of wtd (the run, its store, hostctl).
func TestImportsNothingOfWtd(t *testing.T) {
	fs := token.NewFileSet()
	pkgs, err := parser.ParseDir(fs, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, p := range pkgs {
		for name, f := range p.Files {
			files++
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == "wtd" || strings.HasPrefix(path, "wtd/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
	if files < 10 {
		t.Fatalf("read %d files of the package, want its sources", files)
	}
}

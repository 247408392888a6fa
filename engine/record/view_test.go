package record

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestDocsListEveryKey: docs/json.md names every key of the document, so
// the page that documents the shape cannot fall behind it.
func TestDocsListEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, span := range regexp.MustCompile("`[^`]*`").FindAllString(string(doc), -1) {
		for _, w := range regexp.MustCompile(`[a-z_0-9A-Z]+`).FindAllString(span, -1) {
			named[w] = true
		}
	}
	for _, v := range []any{View{}, Run{}, Push{}, Server{}, Change{}, File{}, Samples{}, Step{}, Output{}, Table{}, Tuning{}, TuneTrial{}, TuneVerdict{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !named[key] {
				t.Errorf("docs/json.md does not name %s's key %q", typ.Name(), key)
			}
		}
	}
}

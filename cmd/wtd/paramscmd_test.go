package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wtd/luabind"
)

// wtd params lists what params{} declares, with types and defaults, as a
// table and as JSON, without running the rest of the playbook; a playbook
// without params{} declares none; a broken one is an error naming it.
func TestParamsListsTheDeclaredParameters(t *testing.T) {
	pb := writePlaybook(t, `local p = params{ sizes = {0.25, 1}, docs = 1000, name = "x", cold = true, tags = {} }
error("the rest of the playbook must not run")
`)
	res := runCLI(t, nil, "params", pb, "--json")
	var got []luabind.Param
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || res.code != 0 {
		t.Fatalf("params --json: %d %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	want := []luabind.Param{
		{Name: "cold", Type: "boolean", Default: true},
		{Name: "docs", Type: "number", Default: float64(1000)},
		{Name: "name", Type: "string", Default: "x"},
		{Name: "sizes", Type: "list of numbers", Default: []any{0.25, float64(1)}},
		{Name: "tags", Type: "list of strings", Default: []any{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("params --json (-want +got):\n%s", d)
	}
	text := runCLI(t, nil, "params", pb)
	for _, w := range []string{"│ sizes │ list of numbers │ 0.25,1  │", "│ cold  │ boolean         │ true    │"} {
		if !strings.Contains(text.stdout, w) {
			t.Errorf("params lacks %q:\n%s", w, text.stdout)
		}
	}
	none := runCLI(t, nil, "params", writePlaybook(t, "log('x')\n"))
	if none.code != 0 || !strings.Contains(none.stdout, "declares no parameters") {
		t.Errorf("no params{}: %d\n%s%s", none.code, none.stdout, none.stderr)
	}
	bad := runCLI(t, nil, "params", writePlaybook(t, "params{ x = 1\n"))
	if bad.code != 2 || !strings.Contains(bad.stderr, "pb.lua") {
		t.Errorf("syntax error: %d\n%s", bad.code, bad.stderr)
	}
}

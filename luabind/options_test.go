package luabind

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// A mistyped option gets the one it most likely meant: "threds" is
// threads; a word near none, or near two alike, gets no guess.
func TestUnknownOptionSaysWhatItMeant(t *testing.T) {
	allowed := []string{"ns", "ops", "duration", "threads", "mix", "working_set", "distribution", "doc_bytes", "seed"}
	for _, c := range []struct{ key, hint string }{
		{"threds", `; did you mean threads?`},
		{"thraeds", `; did you mean threads?`},
		{"Threads", `; did you mean threads?`},
		{"workingset", `; did you mean working_set?`},
		{"dist", ""},
		{"op", `; did you mean ops?`},
		{"zzz", ""},
		{"nss", `; did you mean ns?`},
	} {
		L := lua.NewState(lua.Options{SkipOpenLibs: true})
		t.Cleanup(L.Close)
		tbl := L.NewTable()
		tbl.RawSetString(c.key, lua.LNumber(1))
		L.Push(L.NewFunction(func(L *lua.LState) int {
			tableOptions(L, tbl, "m:workload", allowed...)
			return 0
		}))
		err := L.PCall(0, 0, nil)
		if err == nil {
			t.Fatalf("%s: no error", c.key)
		}
		msg := err.Error()
		want := `m:workload: unknown option "` + c.key + `"` + c.hint + " (allowed: "
		if !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %q", c.key, msg, want)
		}
	}
	if got := nearest("mixx", []string{"mix", "max"}); got != "mix" {
		t.Errorf("nearest(mixx) = %q", got)
	}
	if got := nearest("mox", []string{"mix", "max"}); got != "" {
		t.Errorf("nearest(mox) among two alike = %q, want none", got)
	}
}

package luabind

import (
	"context"
	"errors"
	"testing"
)

// TestCheckReadsParamsFromTheText: a -p no params{} declares is refused by
// Check (before anything is recorded) also when the check stops before the
// playbook calls params{} (here at a pattern function, which a check does
// not run) or it never calls it; a value that does not parse as a
// constant default too. Where the text does not show the declaration, Check
// leaves the overrides to the run.
func TestCheckReadsParamsFromTheText(t *testing.T) {
	const acts = "local _ = string.find('abc', 'b+')\n"
	for _, tc := range []struct {
		name      string
		src       string
		overrides map[string]string
		want      string // "" when Check passes
		never     bool   // the ParamError says params{} is never called
	}{
		{"acts first, unknown name", acts + "local p = params{ docs = 5, gb = 0.25 }\n", map[string]string{"nosuch": "1"},
			`pb.lua:2: params: unknown parameter "nosuch" (-p nosuch=...): the playbook's parameters are docs, gb`, false},
		{"acts first, known name", acts + "local p = params{ docs = 5, gb = 0.25 }\n", map[string]string{"docs": "7", "gb": "1"}, "", false},
		{"acts first, bad number", acts + "local p = params{ docs = 5 }\n", map[string]string{"docs": "many"},
			`pb.lua:2: params: parameter docs: -p docs=many: "many" is not a number (the default is 5)`, false},
		{"acts first, negative default", acts + "params{ n = -1 }\n", map[string]string{"n": "x"}, `"x" is not a number (the default is -1)`, false},
		{"acts first, bad list item", acts + "params{ sizes = { 0.25, 2 } }\n", map[string]string{"sizes": "1,big"}, `item "big" is not a number`, false},
		{"acts first, list of strings", acts + "params{ modes = { 'a' } }\n", map[string]string{"modes": "x,y"}, "", false},
		{"never calls params, acts", acts + "print('x')\n", map[string]string{"nosuch": "1"},
			"playbook pb.lua declares no parameters (it never calls params{}): -p nosuch=1 is not one", true},
		{"never calls params, does not act", "local x = 1\n", map[string]string{"nosuch": "1"},
			"playbook pb.lua declares no parameters (it never calls params{}): -p nosuch=1 is not one", true},
		{"params in a function called later", "local function setup() return params{ docs = 1 } end\n" + acts + "setup()\n",
			map[string]string{"doc": "2"}, `unknown parameter "doc"`, false},
		{"params in both branches", acts + "if os.getenv('X') then params{ a = 1 } else params{ b = 1 } end\n",
			map[string]string{"a": "2", "b": "3"}, "", false},
		{"a default that is no constant", acts + "local base = 4\nparams{ docs = base * 2 }\n", map[string]string{"docs": "many"}, "", false},
		// The text does not show the declaration: the run checks.
		{"table not a literal", acts + "local decl = { docs = 1 }\nparams(decl)\n", map[string]string{"nosuch": "1"}, "", false},
		{"params as a value", acts + "local p = params\np{ docs = 1 }\n", map[string]string{"nosuch": "1"}, "", false},
		{"params through _G", acts + "_G['par' .. 'ams']{ docs = 1 }\n", map[string]string{"nosuch": "1"}, "", false},
		{"params through loadstring", acts + "loadstring('params{ docs = 1 }')()\n", map[string]string{"nosuch": "1"}, "", false},
		{"computed name", acts + "params{ ['do' .. 'cs'] = 1 }\n", map[string]string{"nosuch": "1"}, "", false},
		{"no overrides", acts, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(context.Background(), "pb.lua", tc.src, tc.overrides)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			wantContains(t, err, tc.want)
			var pe *ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("errors.As(%v, *ParamError) = false", err)
			}
			if pe.Never != tc.never {
				t.Errorf("ParamError.Never = %v, want %v", pe.Never, tc.never)
			}
		})
	}
}

// TestCheckRunsParamsItself: a check runs the playbook past what it does
// first, so params{} takes the overrides as in a run, however the playbook
// calls it.
func TestCheckRunsParamsItself(t *testing.T) {
	const acts = "log('starting')\nlocal m = mongod.start{ cacheSizeGB = 1 }\nsleep(3600)\n"
	for _, tc := range []struct{ name, src, want string }{
		{"table not a literal", acts + "local decl = { docs = 1 }\nparams(decl)\n", `pb.lua:5: params: unknown parameter "nosuch"`},
		{"params as a value", acts + "local p = params\np{ docs = 1 }\n", `pb.lua:5: params: unknown parameter "nosuch"`},
		{"params through _G", acts + "_G['par' .. 'ams']{ docs = 1 }\n", `pb.lua:4: params: unknown parameter "nosuch"`},
		{"computed name", acts + "params{ ['do' .. 'cs'] = 1 }\n", `pb.lua:4: params: unknown parameter "nosuch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(context.Background(), "pb.lua", tc.src, map[string]string{"nosuch": "1"})
			wantContains(t, err, tc.want)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Name != "nosuch" {
				t.Fatalf("errors.As(%v, *ParamError) = %v, %+v", err, errors.As(err, &pe), pe)
			}
		})
	}
}

package options

import (
	"errors"
	"fmt"
	"strings"
)

// token is one option occurrence found on the command line.
type token struct {
	spec   *spec  // nil for a hidden "-vv..." switch
	name   string // name as mongod reports it: "port", "vvv", "f"
	canon  string // canonical spelling for boost errors: "--port", "-f"
	value  string
	hasVal bool
}

// cmdParser walks argv the way mongod's boost::program_options setup does:
// no guessing, no sticky short options, long options also accepted with a
// single dash, "--opt value" and "--opt=value".
type cmdParser struct {
	args []string
	pos  int
	seen map[string]bool
	out  env
}

// parseCommandLine turns args into an environment.
func parseCommandLine(args []string) (env, error) {
	p := &cmdParser{args: args, seen: map[string]bool{}, out: env{}}
	for p.pos < len(p.args) {
		if err := p.next(); err != nil {
			return nil, err
		}
	}
	return p.out, nil
}

// next consumes one argument (and its value, if separate).
func (p *cmdParser) next() error {
	arg := p.args[p.pos]
	p.pos++
	if arg == "--" {
		if p.pos < len(p.args) {
			return errPositional
		}
		return nil
	}
	if len(arg) < 2 || arg[0] != '-' {
		return errPositional
	}
	tok, err := p.lex(arg)
	if err != nil {
		return err
	}
	return p.store(tok)
}

// errPositional is boost's error for a non-option argument; mongod
// declares no positional options.
var errPositional = errors.New(
	"Error parsing command line: too many positional options have been specified on the command line")

// lex classifies one option argument.
func (p *cmdParser) lex(arg string) (token, error) {
	if strings.HasPrefix(arg, "--") {
		return p.lexLong(arg[2:], "--")
	}
	body := arg[1:]
	name, _, _ := strings.Cut(body, "=")
	if findCLI(name) != nil || isHiddenV(name) {
		return p.lexLong(body, "-")
	}
	if s := findShort(body[0]); s != nil {
		return p.lexShort(s, body)
	}
	return token{}, unknownOption("-" + body[:1])
}

// lexLong handles "--name", "--name=value" and the single-dash disguise.
func (p *cmdParser) lexLong(body, prefix string) (token, error) {
	name, value, hasVal := strings.Cut(body, "=")
	if isHiddenV(name) {
		return token{name: name, canon: prefix + name, value: value, hasVal: hasVal}, nil
	}
	s := findCLI(name)
	if s == nil {
		return token{}, unknownOption(prefix + name)
	}
	return token{spec: s, name: name, canon: prefix + name, value: value, hasVal: hasVal}, nil
}

// lexShort handles "-f file", "-ffile", "-v", "-vvv" and "-v vv".
func (p *cmdParser) lexShort(s *spec, body string) (token, error) {
	tok := token{spec: s, name: s.cli, canon: "-" + string(s.short)}
	if len(body) > 1 {
		tok.value, tok.hasVal = body[1:], true
	}
	return tok, nil
}

// unknownOption is boost's unknown_option text.
func unknownOption(canon string) error {
	return fmt.Errorf("Error parsing command line: unrecognised option '%s'", canon)
}

// store checks arity and records the token's value.
func (p *cmdParser) store(tok token) error {
	if err := p.fillValue(&tok); err != nil {
		return err
	}
	id := tok.name
	if tok.spec != nil {
		id = tok.spec.key
	}
	if p.seen[id] && (tok.spec == nil || tok.spec.kind != kStringMap) {
		return fmt.Errorf("Error parsing command line:  Multiple occurrences of option \"--%s\"",
			tok.name)
	}
	p.seen[id] = true
	if tok.spec == nil {
		p.out[tok.name] = true
		return nil
	}
	return p.set(tok)
}

// fillValue enforces the option's arity, taking the next argument as the
// value when one is required and none was attached.
func (p *cmdParser) fillValue(tok *token) error {
	switch {
	case tok.spec == nil || tok.spec.kind == kSwitch:
		if tok.hasVal {
			return fmt.Errorf("Error parsing command line: option '%s' does not take any arguments",
				tok.canon)
		}
	case tok.spec.key == keyVerbose:
		p.fillImplicit(tok)
	case !tok.hasVal:
		if p.pos >= len(p.args) || isKnownOption(p.args[p.pos]) {
			return fmt.Errorf("Error parsing command line: the required argument for option '%s' is missing",
				tok.canon)
		}
		tok.value, tok.hasVal = p.args[p.pos], true
		p.pos++
	}
	return nil
}

// fillImplicit gives -v/--verbose its implicit value "v", merging a
// following non-option argument as mongod's transformImplicitOptions does:
// "--verbose vv" is "--verbose=vv", "-v vv" is "-vvv" and "-v x" is "-vx".
func (p *cmdParser) fillImplicit(tok *token) {
	if tok.hasVal {
		return
	}
	if p.pos < len(p.args) && p.args[p.pos] == "" {
		p.pos++
	} else if p.pos < len(p.args) && !strings.HasPrefix(p.args[p.pos], "-") {
		tok.value, tok.hasVal = p.args[p.pos], true
		p.pos++
		if tok.canon == "-v" && isHiddenV("v"+tok.value) {
			tok.value = "v" + tok.value
		}
		return
	}
	tok.value, tok.hasVal = verboseImplicit, true
}

// set converts and stores a valued option.
func (p *cmdParser) set(tok token) error {
	s := tok.spec
	if s.kind == kSwitch {
		p.out[s.key] = true
		return nil
	}
	if s.kind == kStringMap {
		return p.addSetParameter(tok.value)
	}
	v, err := toValue(tok.value, s, s.cli)
	if err != nil {
		return err
	}
	p.out[s.key] = v
	return nil
}

// addSetParameter records one --setParameter name=value.
func (p *cmdParser) addSetParameter(arg string) error {
	param, err := splitAssignment(arg)
	if err != nil {
		return err
	}
	list, _ := p.out[keySetParam].([]Param)
	list, err = addParam(list, param)
	if err != nil {
		return err
	}
	p.out[keySetParam] = list
	return nil
}

// isKnownOption reports whether arg would be read as a registered option;
// boost then refuses to take it as the previous option's value (so
// "--syncdelay -1" passes -1, while "--port --dbpath" is an error).
func isKnownOption(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' {
		return false
	}
	body := strings.TrimPrefix(arg[1:], "-")
	name, _, _ := strings.Cut(body, "=")
	if findCLI(name) != nil || isHiddenV(name) {
		return true
	}
	return !strings.HasPrefix(arg, "--") && findShort(body[0]) != nil
}

package query

import (
	"regexp"
	"slices"
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// Local error codes missing from mongoerr.
const (
	codeInvalidRegex     = 51091
	codeInvalidRegexFlag = 51108
)

// cmpOp is a comparison operator.
type cmpOp int

const (
	opEq cmpOp = iota
	opGt
	opGte
	opLt
	opLte
)

// cmpPred is $eq/$gt/$gte/$lt/$lte against rhs. Ordering operators only
// match values of rhs's canonical type.
type cmpPred struct {
	op  cmpOp
	rhs bsoncore.Value
}

func (p *cmpPred) expand() bool { return true }

func (p *cmpPred) matchValue(v bsoncore.Value) bool {
	if p.op == opEq {
		return Compare(v, p.rhs) == 0
	}
	cv, cr := CanonicalType(v.Type), CanonicalType(p.rhs.Type)
	if cv != cr {
		switch p.rhs.Type {
		case bsoncore.TypeMinKey:
			return p.op == opGt || p.op == opGte
		case bsoncore.TypeMaxKey:
			return p.op == opLt || p.op == opLte
		}
		return false
	}
	if cv == CanonicalType(bsoncore.TypeDouble) {
		vn, rn := isNaN(v), isNaN(p.rhs)
		if vn || rn {
			return vn && rn && (p.op == opGte || p.op == opLte)
		}
	}
	return p.op.holds(compareSameRank(v, p.rhs))
}

// holds reports whether a comparison result c satisfies the operator.
func (op cmpOp) holds(c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opGt:
		return c > 0
	case opGte:
		return c >= 0
	case opLt:
		return c < 0
	}
	return c <= 0
}

func (p *cmpPred) matchMissing() bool {
	switch p.rhs.Type {
	case bsoncore.TypeNull, bsoncore.TypeUndefined:
		return p.op == opEq || p.op == opGte || p.op == opLte
	case bsoncore.TypeMinKey:
		return p.op == opGt || p.op == opGte
	case bsoncore.TypeMaxKey:
		return p.op == opLt || p.op == opLte
	}
	return false
}

// isNaN reports whether a numeric value is NaN.
func isNaN(v bsoncore.Value) bool {
	switch v.Type {
	case bsoncore.TypeDouble:
		f := floatOf(v)
		return f != f
	case bsoncore.TypeDecimal128:
		c, _ := exactDecimal(v)
		return c == classNaN
	}
	return false
}

// inPred is $in: equality with any listed value, or a match of any regex.
type inPred struct {
	vals    []bsoncore.Value // sorted by Compare
	regexes []*regexPred
	hasNull bool
}

// newInPred builds an $in predicate from the array operand.
func newInPred(arr []byte) (*inPred, error) {
	p := &inPred{}
	it := rawbson.NewIter(arr)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		switch {
		case isOperatorDoc(e):
			return nil, mongoerr.New(mongoerr.CodeBadValue, "cannot nest $ under $in")
		case e.Type == bsoncore.TypeRegex:
			rp, err := newRegexPred(e)
			if err != nil {
				return nil, err
			}
			p.regexes = append(p.regexes, rp)
		default:
			p.hasNull = p.hasNull || e.Type == bsoncore.TypeNull || e.Type == bsoncore.TypeUndefined
			p.vals = append(p.vals, e)
		}
	}
	slices.SortFunc(p.vals, Compare)
	return p, nil
}

func (p *inPred) expand() bool { return true }

func (p *inPred) matchMissing() bool { return p.hasNull }

func (p *inPred) matchValue(v bsoncore.Value) bool {
	if _, ok := slices.BinarySearchFunc(p.vals, v, Compare); ok {
		return true
	}
	for _, r := range p.regexes {
		if r.matchValue(v) {
			return true
		}
	}
	return false
}

// existsPred is $exists: true.
type existsPred struct{}

func (existsPred) expand() bool                   { return false }
func (existsPred) matchMissing() bool             { return false }
func (existsPred) matchValue(bsoncore.Value) bool { return true }

// regexPred matches strings against a regular expression; a regex value
// matches when it is the same regex.
type regexPred struct {
	re      *regexp.Regexp
	pattern string
	options string
}

// newRegexPred builds a predicate from a BSON regex value.
func newRegexPred(v bsoncore.Value) (*regexPred, error) {
	pat, opts := rawbson.RegexParts(v.Data)
	return buildRegex(string(pat), string(opts))
}

// buildRegex compiles pattern with mongod's options (i, m, s, x, u).
func buildRegex(pattern, options string) (*regexPred, error) {
	flags := ""
	for _, c := range options {
		switch c {
		case 'i', 'm', 's':
			flags += string(c)
		case 'x', 'u':
		default:
			return nil, mongoerr.New(codeInvalidRegexFlag, "invalid flag in regex options: %c", c)
		}
	}
	src := pattern
	if flags != "" {
		src = "(?" + flags + ")" + pattern
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, mongoerr.New(codeInvalidRegex, "Regular expression is invalid: %s", err.Error())
	}
	return &regexPred{re: re, pattern: pattern, options: options}, nil
}

func (p *regexPred) expand() bool       { return true }
func (p *regexPred) matchMissing() bool { return false }

func (p *regexPred) matchValue(v bsoncore.Value) bool {
	switch v.Type {
	case bsoncore.TypeString, bsoncore.TypeSymbol:
		return p.re.Match(rawbson.StringBytes(v.Data))
	case bsoncore.TypeRegex:
		pat, opts := rawbson.RegexParts(v.Data)
		return string(pat) == p.pattern && string(opts) == p.options
	}
	return false
}

// compileRegexOperator compiles {$regex: ..., $options: ...}.
func compileRegexOperator(p path, regex, options *bsoncore.Value) (node, error) {
	if regex == nil {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$options needs a $regex")
	}
	opts := ""
	if options != nil {
		if options.Type != bsoncore.TypeString {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "$options has to be a string")
		}
		opts = string(rawbson.StringBytes(options.Data))
	}
	var pattern string
	switch regex.Type {
	case bsoncore.TypeString:
		pattern = string(rawbson.StringBytes(regex.Data))
	case bsoncore.TypeRegex:
		pat, o := rawbson.RegexParts(regex.Data)
		if len(o) > 0 && options != nil {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "options set in both $regex and $options")
		}
		pattern = string(pat)
		if options == nil {
			opts = string(o)
		}
	default:
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$regex has to be a string")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "Regular expression cannot contain an embedded null byte")
	}
	rp, err := buildRegex(pattern, opts)
	if err != nil {
		return nil, err
	}
	return &pathNode{p: p, pred: rp}, nil
}

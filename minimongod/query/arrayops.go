package query

import (
	"math"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// compileArrayOperator compiles $size, $all, $elemMatch, $type and $mod;
// anything else is an unknown operator.
func compileArrayOperator(p path, op string, v bsoncore.Value, depth int) (node, error) {
	switch op {
	case "$size":
		return compileSize(p, v)
	case "$all":
		return compileAll(p, v, depth)
	case "$elemMatch":
		return compileElemMatch(p, v, depth)
	case "$type":
		tp, err := newTypePred(v)
		if err != nil {
			return nil, err
		}
		return &pathNode{p: p, pred: tp}, nil
	case "$mod":
		mp, err := newModPred(v)
		if err != nil {
			return nil, err
		}
		return &pathNode{p: p, pred: mp}, nil
	}
	return nil, mongoerr.New(mongoerr.CodeBadValue, "unknown operator: %s", op)
}

// sizePred is $size: the value is an array of exactly n elements.
type sizePred struct{ n int64 }

func (p sizePred) expand() bool       { return false }
func (p sizePred) matchMissing() bool { return false }

func (p sizePred) matchValue(v bsoncore.Value) bool {
	if v.Type != bsoncore.TypeArray || p.n < 0 {
		return false
	}
	var n int64
	it := rawbson.NewIter(v.Data)
	for {
		if _, _, ok := it.Next(); !ok {
			return n == p.n
		}
		n++
	}
}

// compileSize compiles $size; a negative or fractional size matches nothing.
func compileSize(p path, v bsoncore.Value) (node, error) {
	if !isNumber(v.Type) {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$size needs a number")
	}
	n := int64(-1)
	if i, ok := intOf(v); ok {
		n = i
	} else if f, ok := v.DoubleOK(); ok && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		n = int64(f)
	}
	return &pathNode{p: p, pred: sizePred{n: n}}, nil
}

// compileAll compiles $all as an AND of equalities (or $elemMatch clauses).
func compileAll(p path, v bsoncore.Value, depth int) (node, error) {
	if v.Type != bsoncore.TypeArray {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$all needs an array")
	}
	var out andNode
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		n, err := compileAllElement(p, e, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return orNode(nil), nil
	}
	return out, nil
}

// compileAllElement compiles one element of $all.
func compileAllElement(p path, e bsoncore.Value, depth int) (node, error) {
	if isOperatorDoc(e) {
		it := rawbson.NewIter(e.Data)
		k, _, _ := it.Next()
		if string(k) != "$elemMatch" {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "no $ expressions in $all")
		}
		return compileOperators(p, e.Data, depth+1)
	}
	return compilePathValue(p, e, depth)
}

// elemMatchPred is $elemMatch: some element of the array satisfies sub.
// In object form elements must be documents (or arrays) matching a filter;
// in value form each element is tested directly by the operators.
type elemMatchPred struct {
	sub    node
	object bool
}

func (p *elemMatchPred) expand() bool       { return false }
func (p *elemMatchPred) matchMissing() bool { return false }

func (p *elemMatchPred) matchValue(v bsoncore.Value) bool {
	if v.Type != bsoncore.TypeArray {
		return false
	}
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			return false
		}
		if p.object && e.Type != bsoncore.TypeEmbeddedDocument && e.Type != bsoncore.TypeArray {
			continue
		}
		if p.sub.match(e) {
			return true
		}
	}
}

// compileElemMatch compiles $elemMatch in object or value form.
func compileElemMatch(p path, v bsoncore.Value, depth int) (node, error) {
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$elemMatch needs an Object")
	}
	var sub node
	var err error
	object := !isOperatorDoc(v) || startsWithLogical(v.Data)
	if object {
		sub, err = compileDoc(v.Data, depth+1)
	} else {
		sub, err = compileOperators(path{}, v.Data, depth+1)
	}
	if err != nil {
		return nil, err
	}
	return &pathNode{p: p, pred: &elemMatchPred{sub: sub, object: object}}, nil
}

// startsWithLogical reports whether a document's first key is a top-level
// logical operator, which makes $elemMatch use object form.
func startsWithLogical(doc []byte) bool {
	it := rawbson.NewIter(doc)
	k, _, _ := it.Next()
	switch string(k) {
	case "$and", "$or", "$nor", "$comment", "$expr", "$where":
		return true
	}
	return false
}

// typeAliases maps $type names to BSON types (0 stands for "number").
var typeAliases = map[string]bsoncore.Type{
	"double": bsoncore.TypeDouble, "string": bsoncore.TypeString,
	"object": bsoncore.TypeEmbeddedDocument, "array": bsoncore.TypeArray,
	"binData": bsoncore.TypeBinary, "undefined": bsoncore.TypeUndefined,
	"objectId": bsoncore.TypeObjectID, "bool": bsoncore.TypeBoolean,
	"date": bsoncore.TypeDateTime, "null": bsoncore.TypeNull,
	"regex": bsoncore.TypeRegex, "dbPointer": bsoncore.TypeDBPointer,
	"javascript": bsoncore.TypeJavaScript, "symbol": bsoncore.TypeSymbol,
	"javascriptWithScope": bsoncore.TypeCodeWithScope, "int": bsoncore.TypeInt32,
	"timestamp": bsoncore.TypeTimestamp, "long": bsoncore.TypeInt64,
	"decimal": bsoncore.TypeDecimal128, "minKey": bsoncore.TypeMinKey,
	"maxKey": bsoncore.TypeMaxKey, "number": 0,
}

// typePred is $type: the value has one of the listed BSON types.
type typePred struct {
	types  []bsoncore.Type
	number bool
}

func (p *typePred) expand() bool       { return true }
func (p *typePred) matchMissing() bool { return false }

func (p *typePred) matchValue(v bsoncore.Value) bool {
	if p.number && isNumber(v.Type) {
		return true
	}
	for _, t := range p.types {
		if t == v.Type {
			return true
		}
	}
	return false
}

// newTypePred parses the $type operand: an alias, a code, or an array.
func newTypePred(v bsoncore.Value) (*typePred, error) {
	p := &typePred{}
	if v.Type != bsoncore.TypeArray {
		return p, p.add(v)
	}
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			return p, nil
		}
		if err := p.add(e); err != nil {
			return nil, err
		}
	}
}

// add appends one type given by alias or numeric code.
func (p *typePred) add(v bsoncore.Value) error {
	if v.Type == bsoncore.TypeString {
		name := string(rawbson.StringBytes(v.Data))
		t, ok := typeAliases[name]
		if !ok {
			return mongoerr.New(mongoerr.CodeBadValue, "Unknown type name alias: %s", name)
		}
		p.addType(t)
		return nil
	}
	if !isNumber(v.Type) {
		return mongoerr.New(mongoerr.CodeTypeMismatch, "type must be represented as a number or a string")
	}
	code, _ := toFloat(v)
	if !validTypeCode(code) {
		return mongoerr.New(mongoerr.CodeBadValue, "Invalid numerical type code: %v", code)
	}
	p.addType(bsoncore.Type(int8(code)))
	return nil
}

// addType records t; type 0 means any number.
func (p *typePred) addType(t bsoncore.Type) {
	if t == 0 {
		p.number = true
		return
	}
	p.types = append(p.types, t)
}

// validTypeCode reports whether code is a BSON type number $type accepts.
func validTypeCode(code float64) bool {
	if code != math.Trunc(code) {
		return false
	}
	return code == -1 || code == 127 || code >= 1 && code <= 19
}

// modPred is $mod: [divisor, remainder] on the truncated numeric value.
type modPred struct{ div, rem int64 }

func (p modPred) expand() bool       { return true }
func (p modPred) matchMissing() bool { return false }

func (p modPred) matchValue(v bsoncore.Value) bool {
	n, ok := truncInt(v)
	if !ok {
		return false
	}
	if p.div == -1 {
		return p.rem == 0
	}
	return n%p.div == p.rem
}

// truncInt converts a number to int64 by truncation.
func truncInt(v bsoncore.Value) (int64, bool) {
	if i, ok := intOf(v); ok {
		return i, true
	}
	if !isNumber(v.Type) {
		return 0, false
	}
	f, _ := toFloat(v)
	if f != f || math.Abs(f) >= 0x1p63 {
		return 0, false
	}
	return int64(f), true
}

// newModPred parses the $mod operand.
func newModPred(v bsoncore.Value) (modPred, error) {
	if v.Type != bsoncore.TypeArray {
		return modPred{}, mongoerr.New(mongoerr.CodeBadValue, "malformed mod, needs to be an array")
	}
	var nums []int64
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		n, ok := truncInt(e)
		if !ok {
			return modPred{}, mongoerr.New(mongoerr.CodeBadValue, "malformed mod, divisor and remainder must be numbers")
		}
		nums = append(nums, n)
	}
	switch {
	case len(nums) < 2:
		return modPred{}, mongoerr.New(mongoerr.CodeBadValue, "malformed mod, not enough elements")
	case len(nums) > 2:
		return modPred{}, mongoerr.New(mongoerr.CodeBadValue, "malformed mod, too many elements")
	case nums[0] == 0:
		return modPred{}, mongoerr.New(mongoerr.CodeBadValue, "divisor cannot be 0")
	}
	return modPred{div: nums[0], rem: nums[1]}, nil
}

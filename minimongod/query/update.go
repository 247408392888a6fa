package query

import (
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// Local error codes missing from mongoerr.
const (
	codeEmptyFieldName      = 56
	codeNotSingleValueField = 54
)

// opKind is an update modifier.
type opKind int

const (
	updSet opKind = iota
	updSetOnInsert
	updUnset
	updInc
	updMul
	updMin
	updMax
	updRename // destination of a $rename
	updCurrentDate
	updPush
	updAddToSet
	updPop
	updPull
	updPullAll
)

// modifiers maps update operator names to kinds.
var modifiers = map[string]opKind{
	"$set": updSet, "$setOnInsert": updSetOnInsert, "$unset": updUnset,
	"$inc": updInc, "$mul": updMul, "$min": updMin, "$max": updMax,
	"$rename": updRename, "$currentDate": updCurrentDate, "$push": updPush,
	"$addToSet": updAddToSet, "$pop": updPop, "$pull": updPull, "$pullAll": updPullAll,
}

// updateOp is one modifier applied to one path.
type updateOp struct {
	kind  opKind
	name  string // modifier name, for messages
	path  string
	arg   bsoncore.Value
	from  string // $rename source path
	slot  int    // $rename: index of the source value in applyCtx.renamed
	pull  node   // $pull condition
	each  []bsoncore.Value
	pos   *int64 // $push $position
	slice *int64 // $push $slice
}

// Update is a compiled update: modifiers or a replacement document.
type Update struct {
	replacement bson.Raw
	isRepl      bool
	ops         []*updateOp
	tree        *updNode // without $setOnInsert
	upsertTree  *updNode // with $setOnInsert
	renames     []*updateOp
}

// IsReplacement reports whether the update replaces whole documents.
func (u *Update) IsReplacement() bool { return u.isRepl }

// CompileUpdate parses an update document: all modifiers ($set, $unset,
// $inc, $mul, $min, $max, $rename, $setOnInsert, $currentDate, $push,
// $addToSet, $pop, $pull, $pullAll) or a replacement with no $ fields.
func CompileUpdate(u bson.Raw) (*Update, error) {
	it := rawbson.NewIter(u)
	k, _, ok := it.Next()
	if !ok || len(k) == 0 || k[0] != '$' {
		return compileReplacement(u)
	}
	up := &Update{}
	it = rawbson.NewIter(u)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if err := up.addModifier(string(k), v); err != nil {
			return nil, err
		}
	}
	return up, up.buildTrees()
}

// compileReplacement validates a replacement document.
func compileReplacement(u bson.Raw) (*Update, error) {
	it := rawbson.NewIter(u)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		if len(k) > 0 && k[0] == '$' {
			return nil, mongoerr.New(mongoerr.CodeDollarPrefixedField,
				"The dollar ($) prefixed field '%s' in '%s' is not valid for storage.", k, k)
		}
	}
	if len(u) == 0 {
		u = emptyDoc(bsoncore.TypeEmbeddedDocument).Data
	}
	return &Update{replacement: u, isRepl: true}, nil
}

// addModifier parses one {$op: {path: arg, ...}} clause.
func (u *Update) addModifier(name string, v bsoncore.Value) error {
	kind, ok := modifiers[name]
	if !ok {
		return mongoerr.New(mongoerr.CodeFailedToParse,
			"Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", name)
	}
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.CodeFailedToParse,
			"Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s: %s}",
			TypeName(v.Type), name, formatValue(v))
	}
	it := rawbson.NewIter(v.Data)
	n := 0
	for {
		k, arg, ok := it.Next()
		if !ok {
			break
		}
		n++
		op, err := newUpdateOp(kind, name, string(k), arg)
		if err != nil {
			return err
		}
		u.ops = append(u.ops, op)
	}
	if n == 0 {
		return mongoerr.New(mongoerr.CodeFailedToParse,
			"'%s' is empty. You must specify a field like so: {%s: {<field>: ...}}", name, name)
	}
	return nil
}

// newUpdateOp validates one modifier argument.
func newUpdateOp(kind opKind, name, path string, arg bsoncore.Value) (*updateOp, error) {
	if err := checkUpdatePath(path); err != nil {
		return nil, err
	}
	op := &updateOp{kind: kind, name: name, path: path, arg: arg}
	switch kind {
	case updInc, updMul:
		if !isNumber(arg.Type) {
			verb := "increment"
			if kind == updMul {
				verb = "multiply"
			}
			return nil, mongoerr.New(mongoerr.CodeTypeMismatch,
				"Cannot %s with non-numeric argument: {%s}", verb, formatElem(path, arg))
		}
	case updRename:
		return newRenameOp(op)
	case updCurrentDate:
		return op, checkCurrentDate(op)
	case updPush, updAddToSet:
		return op, parseEach(op)
	case updPop:
		if !isNumber(arg.Type) {
			return nil, mongoerr.New(mongoerr.CodeFailedToParse,
				"Expected a number in: %s", formatElem(path, arg))
		}
	case updPull:
		return op, compilePull(op)
	case updPullAll:
		if arg.Type != bsoncore.TypeArray {
			return nil, mongoerr.New(mongoerr.CodeBadValue,
				"$pullAll requires an array argument but was given a %s", TypeName(arg.Type))
		}
	}
	return op, nil
}

// checkUpdatePath rejects empty paths and empty path components.
func checkUpdatePath(path string) error {
	if path == "" {
		return mongoerr.New(mongoerr.CodeFailedToParse, "An empty update path is not valid.")
	}
	if path[0] == '.' || path[len(path)-1] == '.' || strings.Contains(path, "..") {
		return mongoerr.New(codeEmptyFieldName,
			"The update path '%s' contains an empty field name, which is not allowed.", path)
	}
	return nil
}

// newRenameOp validates {$rename: {from: "to"}}; op.path becomes the target.
func newRenameOp(op *updateOp) (*updateOp, error) {
	if op.arg.Type != bsoncore.TypeString {
		return nil, mongoerr.New(mongoerr.CodeBadValue,
			"The 'to' field for $rename must be a string: %s", formatElem(op.path, op.arg))
	}
	to := string(rawbson.StringBytes(op.arg.Data))
	if err := checkUpdatePath(to); err != nil {
		return nil, err
	}
	switch {
	case to == op.path:
		return nil, mongoerr.New(mongoerr.CodeBadValue,
			"The source and target field for $rename must differ: %s", formatElem(op.path, op.arg))
	case isPathPrefix(op.path, to) || isPathPrefix(to, op.path):
		return nil, mongoerr.New(mongoerr.CodeBadValue,
			"The source and target field for $rename must not be on the same path: %s", formatElem(op.path, op.arg))
	}
	op.from, op.path = op.path, to
	return op, nil
}

// isPathPrefix reports whether a is a proper dotted prefix of b.
func isPathPrefix(a, b string) bool {
	return len(b) > len(a) && strings.HasPrefix(b, a) && b[len(a)] == '.'
}

// checkCurrentDate validates a $currentDate argument.
func checkCurrentDate(op *updateOp) error {
	if op.arg.Type == bsoncore.TypeBoolean {
		return nil
	}
	if op.arg.Type == bsoncore.TypeEmbeddedDocument {
		t, ok := lookupField(op.arg.Data, "$type")
		if s := string(rawbson.StringBytes(t.Data)); ok && t.Type == bsoncore.TypeString && (s == "date" || s == "timestamp") {
			return nil
		}
	}
	return mongoerr.New(mongoerr.CodeBadValue,
		"%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).",
		TypeName(op.arg.Type))
}

// parseEach reads the $push/$addToSet argument and its $each modifiers.
func parseEach(op *updateOp) error {
	if !isOperatorDoc(op.arg) {
		op.each = []bsoncore.Value{op.arg}
		return nil
	}
	it := rawbson.NewIter(op.arg.Data)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if err := op.eachModifier(string(k), v); err != nil {
			return err
		}
	}
	if op.each == nil {
		return mongoerr.New(mongoerr.CodeBadValue, "%s modifiers require $each", op.name)
	}
	return nil
}

// eachModifier applies one of $each, $position, $slice.
func (op *updateOp) eachModifier(k string, v bsoncore.Value) error {
	switch {
	case k == "$each":
		if v.Type != bsoncore.TypeArray {
			return mongoerr.New(mongoerr.CodeBadValue,
				"The argument to $each in %s must be an array but it was of type: %s", op.name, TypeName(v.Type))
		}
		vals, _ := bsoncore.Array(v.Data).Values()
		op.each = append([]bsoncore.Value{}, vals...)
		return nil
	case (k == "$position" || k == "$slice") && op.kind == updPush:
		n, ok := intOf(v)
		if !ok {
			if f, isF := v.DoubleOK(); isF && f == float64(int64(f)) {
				n, ok = int64(f), true
			}
		}
		if !ok {
			return mongoerr.New(mongoerr.CodeBadValue, "The value for %s must be an integer value", k)
		}
		if k == "$position" {
			op.pos = &n
		} else {
			op.slice = &n
		}
		return nil
	}
	return mongoerr.New(mongoerr.CodeBadValue, "Unrecognized clause in %s: %s", op.name, k)
}

// compilePull compiles the $pull condition: an operator document tests
// elements directly, a plain document is a query on document elements, any
// other value is an equality.
func compilePull(op *updateOp) error {
	var err error
	switch {
	case isOperatorDoc(op.arg) && !startsWithLogical(op.arg.Data):
		op.pull, err = compileOperators(path{}, op.arg.Data, 0)
	case op.arg.Type == bsoncore.TypeEmbeddedDocument:
		var sub node
		sub, err = compileDoc(op.arg.Data, 0)
		op.pull = docOnly{sub}
	case op.arg.Type == bsoncore.TypeRegex:
		var rp *regexPred
		rp, err = newRegexPred(op.arg)
		op.pull = &pathNode{pred: rp}
	default:
		op.pull = &pathNode{pred: &cmpPred{op: opEq, rhs: op.arg}}
	}
	return err
}

// docOnly applies a query only to document values.
type docOnly struct{ n node }

func (d docOnly) match(v bsoncore.Value) bool {
	return v.Type == bsoncore.TypeEmbeddedDocument && d.n.match(v)
}

// buildTrees arranges the ops into path trees and detects conflicts.
func (u *Update) buildTrees() error {
	u.tree, u.upsertTree = newUpdNode(), newUpdNode()
	for _, op := range u.ops {
		if op.kind == updRename {
			op.slot = len(u.renames)
			u.renames = append(u.renames, op)
			src := &updateOp{kind: updUnset, name: op.name, path: op.from}
			if err := u.insert(src); err != nil {
				return err
			}
		}
		if err := u.insert(op); err != nil {
			return err
		}
	}
	return nil
}

// insert adds op to the trees.
func (u *Update) insert(op *updateOp) error {
	if err := u.upsertTree.insert(op); err != nil {
		return conflictError(op.path, err.(conflict))
	}
	if op.kind != updSetOnInsert {
		_ = u.tree.insert(op)
	}
	return nil
}

// conflictError is mongod's ConflictingUpdateOperators error.
func conflictError(path string, c conflict) error {
	return mongoerr.New(mongoerr.CodeConflictingUpdateOps,
		"Updating the path '%s' would create a conflict at '%s'", path, c.at)
}

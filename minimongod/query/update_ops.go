package query

import (
	"math"
	"strings"
	"time"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// apply computes the field's new value; keep=false removes the field.
func (op *updateOp) apply(cur bsoncore.Value, present bool, ctx *applyCtx) (nv bsoncore.Value, keep bool, err error) {
	switch op.kind {
	case updSet, updSetOnInsert:
		return op.arg, true, nil
	case updUnset:
		return nv, false, nil
	case updInc, updMul:
		return op.arith(cur, present, ctx)
	case updMin, updMax:
		return op.minMax(cur, present), true, nil
	case updRename:
		if v := ctx.renamed[op.slot]; v.Type != 0 {
			return v, true, nil
		}
		return cur, present, nil
	case updCurrentDate:
		return op.currentDate(ctx), true, nil
	case updPush:
		return op.push(cur, present, ctx)
	case updAddToSet:
		return op.addToSet(cur, present)
	}
	return op.remove(cur, present)
}

// lastComp returns the last component of the op's path.
func (op *updateOp) lastComp() string {
	return op.path[strings.LastIndexByte(op.path, '.')+1:]
}

// arith applies $inc or $mul with mongod's numeric type promotion.
func (op *updateOp) arith(cur bsoncore.Value, present bool, ctx *applyCtx) (bsoncore.Value, bool, error) {
	if !present {
		if op.kind == updInc {
			return op.arg, true, nil
		}
		return zeroLike(op.arg), true, nil
	}
	if !isNumber(cur.Type) {
		return cur, false, mongoerr.New(mongoerr.CodeTypeMismatch,
			"Cannot apply %s to a value of non-numeric type. %s has the field '%s' of non-numeric type %s",
			op.name, ctx.idText(), op.lastComp(), TypeName(cur.Type))
	}
	if cur.Type == bsoncore.TypeDecimal128 || op.arg.Type == bsoncore.TypeDecimal128 {
		return cur, false, mongoerr.New(mongoerr.CodeNotImplemented, "%s on decimal values is not supported", op.name)
	}
	v, ok := numericOp(op.kind, cur, op.arg)
	if !ok {
		return cur, false, mongoerr.New(mongoerr.CodeBadValue,
			"Failed to apply %s operations to current value (%s) for document %s",
			op.name, formatValue(cur), ctx.idText())
	}
	return v, true, nil
}

// zeroLike returns 0 of v's numeric type ($mul on a missing field).
func zeroLike(v bsoncore.Value) bsoncore.Value {
	switch v.Type {
	case bsoncore.TypeInt32:
		return int32Val(0)
	case bsoncore.TypeInt64:
		return int64Val(0)
	}
	return doubleVal(0)
}

// numericOp adds or multiplies: any double gives a double, int32 overflow
// widens to int64, int64 overflow fails.
func numericOp(kind opKind, a, b bsoncore.Value) (bsoncore.Value, bool) {
	if a.Type == bsoncore.TypeDouble || b.Type == bsoncore.TypeDouble {
		x, _ := toFloat(a)
		y, _ := toFloat(b)
		if kind == updInc {
			return doubleVal(x + y), true
		}
		return doubleVal(x * y), true
	}
	x, _ := intOf(a)
	y, _ := intOf(b)
	r, ok := addOrMul(kind, x, y)
	if !ok {
		return bsoncore.Value{}, false
	}
	if a.Type == bsoncore.TypeInt32 && b.Type == bsoncore.TypeInt32 && r >= math.MinInt32 && r <= math.MaxInt32 {
		return int32Val(int32(r)), true
	}
	return int64Val(r), true
}

// addOrMul computes x+y or x*y, reporting int64 overflow.
func addOrMul(kind opKind, x, y int64) (int64, bool) {
	if kind == updInc {
		r := x + y
		return r, (r > x) == (y > 0) || y == 0
	}
	if x == 0 || y == 0 {
		return 0, true
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, false
	}
	return r, true
}

// minMax applies $min or $max by BSON comparison order.
func (op *updateOp) minMax(cur bsoncore.Value, present bool) bsoncore.Value {
	if !present {
		return op.arg
	}
	c := Compare(op.arg, cur)
	if op.kind == updMin && c < 0 || op.kind == updMax && c > 0 {
		return op.arg
	}
	return cur
}

// currentDate returns the current time as a date or timestamp.
func (op *updateOp) currentDate(ctx *applyCtx) bsoncore.Value {
	if ctx.now.IsZero() {
		ctx.now = time.Now()
	}
	if op.arg.Type == bsoncore.TypeEmbeddedDocument {
		if t, _ := lookupField(op.arg.Data, "$type"); string(rawbson.StringBytes(t.Data)) == "timestamp" {
			return bsoncore.Value{Type: bsoncore.TypeTimestamp,
				Data: bsoncore.AppendTimestamp(nil, uint32(ctx.now.Unix()), 1)}
		}
	}
	return dateVal(ctx.now.UnixMilli())
}

// arrayValues returns the elements of an array value.
func arrayValues(v bsoncore.Value) []bsoncore.Value {
	var out []bsoncore.Value
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// buildArray encodes values as a BSON array value.
func buildArray(vals []bsoncore.Value) bsoncore.Value {
	idx, dst := bsoncore.AppendArrayStart(nil)
	for i, v := range vals {
		dst = appendElem(dst, indexKey(i), v)
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return bsoncore.Value{Type: bsoncore.TypeArray, Data: dst}
}

// push applies $push with $each, $position and $slice.
func (op *updateOp) push(cur bsoncore.Value, present bool, ctx *applyCtx) (bsoncore.Value, bool, error) {
	var vals []bsoncore.Value
	if present {
		if cur.Type != bsoncore.TypeArray {
			return cur, false, mongoerr.New(mongoerr.CodeBadValue,
				"The field '%s' must be an array but is of type %s in document %s",
				op.lastComp(), TypeName(cur.Type), ctx.idText())
		}
		vals = arrayValues(cur)
	}
	pos := len(vals)
	if op.pos != nil {
		p := *op.pos
		if p < 0 {
			p += int64(len(vals))
		}
		pos = int(max(0, min(p, int64(len(vals)))))
	}
	vals = append(vals[:pos], append(append([]bsoncore.Value{}, op.each...), vals[pos:]...)...)
	if op.slice != nil {
		vals = sliceValues(vals, *op.slice)
	}
	return buildArray(vals), true, nil
}

// sliceValues keeps the first n (n >= 0) or last -n values.
func sliceValues(vals []bsoncore.Value, n int64) []bsoncore.Value {
	l := int64(len(vals))
	if n >= 0 {
		return vals[:min(n, l)]
	}
	return vals[l-min(-n, l):]
}

// addToSet applies $addToSet, appending only values not already present.
func (op *updateOp) addToSet(cur bsoncore.Value, present bool) (bsoncore.Value, bool, error) {
	var vals []bsoncore.Value
	if present {
		if cur.Type != bsoncore.TypeArray {
			return cur, false, mongoerr.New(mongoerr.CodeBadValue,
				"Cannot apply $addToSet to non-array field. Field named '%s' has non-array type %s",
				op.lastComp(), TypeName(cur.Type))
		}
		vals = arrayValues(cur)
	}
	set := newValueSet(len(vals) + len(op.each))
	for _, v := range vals {
		set.add(v)
	}
	for _, e := range op.each {
		if !set.contains(e) {
			vals = append(vals, e)
			set.add(e)
		}
	}
	return buildArray(vals), true, nil
}

// remove applies $pop, $pull and $pullAll; missing fields stay missing.
func (op *updateOp) remove(cur bsoncore.Value, present bool) (bsoncore.Value, bool, error) {
	if !present {
		return cur, false, nil
	}
	if cur.Type != bsoncore.TypeArray {
		if op.kind == updPop {
			return cur, false, mongoerr.New(mongoerr.CodeTypeMismatch,
				"Path '%s' contains an element of non-array type '%s'", op.path, TypeName(cur.Type))
		}
		return cur, false, mongoerr.New(mongoerr.CodeBadValue, "Cannot apply $pull to a non-array value")
	}
	vals := arrayValues(cur)
	switch op.kind {
	case updPop:
		if len(vals) > 0 {
			if f, _ := toFloat(op.arg); f < 0 {
				vals = vals[1:]
			} else {
				vals = vals[:len(vals)-1]
			}
		}
	case updPull:
		vals = filterValues(vals, op.pull.match)
	default:
		drop := arrayValues(op.arg)
		set := newValueSet(len(drop))
		for _, d := range drop {
			set.add(d)
		}
		vals = filterValues(vals, set.contains)
	}
	return buildArray(vals), true, nil
}

// filterValues drops the values for which drop returns true.
func filterValues(vals []bsoncore.Value, drop func(bsoncore.Value) bool) []bsoncore.Value {
	out := vals[:0]
	for _, v := range vals {
		if !drop(v) {
			out = append(out, v)
		}
	}
	return out
}

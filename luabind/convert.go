package luabind

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxDepth bounds the nesting of converted values (and catches cycles).
const maxDepth = 100

// resultTag is the metatable field of a result table (m:load, m:workload)
// that holds the engine's Go result, so that step{} hands the engine the
// original value rather than a copy converted back from Lua.
const resultTag = "__wtd_result"

// resultToLua converts an engine result struct to a Lua table through its
// JSON form (field names are the snake_case JSON tags) and attaches the Go
// value to the table's metatable.
func resultToLua(L *lua.LState, res any) (*lua.LTable, error) {
	v, err := jsonToGo(res)
	if err != nil {
		return nil, err
	}
	t, ok := toLua(L, v).(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("result %T is not an object", res)
	}
	ud := L.NewUserData()
	ud.Value = res
	mt := L.NewTable()
	mt.RawSetString(resultTag, ud)
	L.SetMetatable(t, mt)
	return t, nil
}

// goResult returns the engine result attached to t by resultToLua.
func goResult(L *lua.LState, t *lua.LTable) (any, bool) {
	mt, ok := L.GetMetatable(t).(*lua.LTable)
	if !ok {
		return nil, false
	}
	ud, ok := mt.RawGetString(resultTag).(*lua.LUserData)
	if !ok {
		return nil, false
	}
	return ud.Value, true
}

// structToLua converts a Go struct to a Lua table through its JSON form.
func structToLua(L *lua.LState, v any) (lua.LValue, error) {
	g, err := jsonToGo(v)
	if err != nil {
		return nil, err
	}
	return toLua(L, g), nil
}

func jsonToGo(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("convert %T: %w", v, err)
	}
	return out, nil
}

// toLua converts plain Go values (as from JSON or the BSON decoder) to Lua:
// maps and documents become tables with string keys, slices and arrays
// 1-based lists, numbers numbers, dates milliseconds since the epoch,
// ObjectIds hex strings. Other values become their JSON form, or their
// text.
func toLua(L *lua.LState, v any) lua.LValue {
	return toLuaDepth(L, v, 0)
}

func toLuaDepth(L *lua.LState, v any, depth int) lua.LValue {
	if depth > maxDepth {
		return lua.LString("<too deep>")
	}
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case float32:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case uint64:
		return lua.LNumber(x)
	case json.Number:
		f, _ := x.Float64()
		return lua.LNumber(f)
	case time.Time:
		return lua.LNumber(x.UnixMilli())
	case bson.DateTime:
		return lua.LNumber(int64(x))
	case bson.ObjectID:
		return lua.LString(x.Hex())
	case bson.Timestamp:
		t := L.NewTable()
		t.RawSetString("t", lua.LNumber(x.T))
		t.RawSetString("i", lua.LNumber(x.I))
		return t
	case bson.Decimal128:
		return lua.LString(x.String())
	case bson.Binary:
		return lua.LString(base64.StdEncoding.EncodeToString(x.Data))
	case bson.Raw:
		return rawDocToLua(L, x, depth)
	case bson.D:
		t := L.NewTable()
		for _, e := range x {
			t.RawSetString(e.Key, toLuaDepth(L, e.Value, depth+1))
		}
		return t
	case bson.M:
		return toLuaDepth(L, map[string]any(x), depth)
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLuaDepth(L, e, depth+1))
		}
		return t
	case bson.A:
		return toLuaDepth(L, []any(x), depth)
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			t.RawSetInt(i+1, toLuaDepth(L, e, depth+1))
		}
		return t
	}
	g, err := jsonToGo(v)
	if err != nil {
		return lua.LString(fmt.Sprint(v))
	}
	return toLuaDepth(L, g, depth+1)
}

// rawDocToLua converts a BSON document (serverStatus, a command reply) to
// a Lua table.
func rawDocToLua(L *lua.LState, doc bson.Raw, depth int) lua.LValue {
	t := L.NewTable()
	elems, err := doc.Elements()
	if err != nil {
		return lua.LString(doc.String())
	}
	for _, e := range elems {
		t.RawSetString(e.Key(), rawValueToLua(L, e.Value(), depth+1))
	}
	return t
}

func rawValueToLua(L *lua.LState, v bson.RawValue, depth int) lua.LValue {
	if depth > maxDepth {
		return lua.LString("<too deep>")
	}
	switch v.Type {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64:
		f, _ := v.AsFloat64OK()
		return lua.LNumber(f)
	case bson.TypeString:
		return lua.LString(v.StringValue())
	case bson.TypeBoolean:
		return lua.LBool(v.Boolean())
	case bson.TypeEmbeddedDocument:
		return rawDocToLua(L, v.Document(), depth)
	case bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return lua.LString(v.String())
		}
		t := L.CreateTable(len(vals), 0)
		for i, e := range vals {
			t.RawSetInt(i+1, rawValueToLua(L, e, depth+1))
		}
		return t
	case bson.TypeDateTime:
		return lua.LNumber(v.DateTime())
	case bson.TypeObjectID:
		return lua.LString(v.ObjectID().Hex())
	case bson.TypeTimestamp:
		ts, inc := v.Timestamp()
		t := L.NewTable()
		t.RawSetString("t", lua.LNumber(ts))
		t.RawSetString("i", lua.LNumber(inc))
		return t
	case bson.TypeNull, bson.TypeUndefined:
		return lua.LNil
	case bson.TypeDecimal128:
		return lua.LString(v.Decimal128().String())
	case bson.TypeBinary:
		_, data := v.Binary()
		return lua.LString(base64.StdEncoding.EncodeToString(data))
	}
	return lua.LString(v.String())
}

// fromLua converts a Lua value to plain Go values: nil, bool, float64,
// string, []any for lists and map[string]any for other tables (non-string
// keys are written as text). Functions, userdata and threads are an error.
func fromLua(v lua.LValue) (any, error) {
	return fromLuaDepth(v, 0)
}

func fromLuaDepth(v lua.LValue, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep (a cycle?)", maxDepth)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		if isList(x) && x.Len() > 0 {
			out := make([]any, 0, x.Len())
			for i := 1; i <= x.Len(); i++ {
				e, err := fromLuaDepth(x.RawGetInt(i), depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, e)
			}
			return out, nil
		}
		out := map[string]any{}
		var ferr error
		x.ForEach(func(k, e lua.LValue) {
			if ferr != nil {
				return
			}
			g, err := fromLuaDepth(e, depth+1)
			if err != nil {
				ferr = err
				return
			}
			out[k.String()] = g
		})
		return out, ferr
	}
	return nil, fmt.Errorf("a %s cannot be recorded", v.Type())
}

// toBSON converts a Lua value for a command: whole numbers become int32
// (int64 when larger), other numbers doubles, lists arrays, other tables
// documents with their keys sorted (an empty table is an empty document).
func toBSON(v lua.LValue) (any, error) {
	return toBSONDepth(v, 0)
}

func toBSONDepth(v lua.LValue, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep (a cycle?)", maxDepth)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return bsonNumber(float64(x)), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		if isList(x) && x.Len() > 0 {
			out := bson.A{}
			for i := 1; i <= x.Len(); i++ {
				e, err := toBSONDepth(x.RawGetInt(i), depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, e)
			}
			return out, nil
		}
		return tableToDoc(x, depth)
	}
	return nil, fmt.Errorf("a %s cannot be sent to the server", v.Type())
}

// tableToDoc converts a table to a document with its keys sorted.
func tableToDoc(t *lua.LTable, depth int) (bson.D, error) {
	var keys []string
	vals := map[string]lua.LValue{}
	t.ForEach(func(k, e lua.LValue) {
		keys = append(keys, k.String())
		vals[k.String()] = e
	})
	sort.Strings(keys)
	doc := bson.D{}
	for _, k := range keys {
		e, err := toBSONDepth(vals[k], depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		doc = append(doc, bson.E{Key: k, Value: e})
	}
	return doc, nil
}

func bsonNumber(f float64) any {
	switch {
	case f != math.Trunc(f) || math.IsInf(f, 0):
		return f
	case f >= math.MinInt32 && f <= math.MaxInt32:
		return int32(f)
	case math.Abs(f) < 1<<63:
		return int64(f)
	}
	return f
}

// formatNumber writes a Lua number as Lua's tostring does for whole
// numbers ("2", not "2e+00"), and with %g otherwise.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

package schedule

import (
	"context"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/hostctl"
)

// Transition is one application of a window's settings: the values the
// server reported before and after (getParameter), and those set.
type Transition struct {
	Set    map[string]any `json:"set"`
	Before map[string]any `json:"before"`
	After  map[string]any `json:"after"`
}

// applyParams connects to the loopback server uri and, for each
// parameter in turn, reads it, sets it and reads it back. A value read
// back that differs from the one set is an error.
func applyParams(ctx context.Context, uri string, params []Param) (Transition, error) {
	tr := Transition{Set: map[string]any{}, Before: map[string]any{}, After: map[string]any{}}
	client, err := hostctl.Connect(ctx, uri, hostctl.ConnectOptions{})
	if err != nil {
		return tr, err
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	admin := client.Database("admin")
	for _, p := range params {
		before, err := getParameter(ctx, admin, p.Name)
		if err != nil {
			return tr, err
		}
		value := bsonValue(p.Value)
		if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: p.Name, Value: value}}).Err(); err != nil {
			return tr, fmt.Errorf("setParameter %s: %w", p.Name, err)
		}
		after, err := getParameter(ctx, admin, p.Name)
		if err != nil {
			return tr, err
		}
		tr.Set[p.Name], tr.Before[p.Name], tr.After[p.Name] = p.Value, before, after
		if !sameValue(after, p.Value) {
			return tr, fmt.Errorf("setParameter %s: set %v, the server reads back %v", p.Name, p.Value, after)
		}
	}
	return tr, nil
}

// GetParameter reads one server parameter from a loopback server (for
// tests and checks).
func GetParameter(ctx context.Context, uri, name string) (any, error) {
	client, err := hostctl.Connect(ctx, uri, hostctl.ConnectOptions{})
	if err != nil {
		return nil, err
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	return getParameter(ctx, client.Database("admin"), name)
}

func getParameter(ctx context.Context, admin *mongo.Database, name string) (any, error) {
	raw, err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Raw()
	if err != nil {
		return nil, fmt.Errorf("getParameter %s: %w", name, err)
	}
	v, err := raw.LookupErr(name)
	if err != nil {
		return nil, fmt.Errorf("getParameter %s: not in the reply", name)
	}
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean(), nil
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		return v.Int64(), nil
	case bson.TypeDouble:
		return v.Double(), nil
	case bson.TypeString:
		return v.StringValue(), nil
	}
	return v.String(), nil
}

// bsonValue sends whole numbers as int32 when they fit.
func bsonValue(v any) any {
	if i, ok := v.(int64); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
		return int32(i)
	}
	return v
}

// sameValue compares a value read back with the one set, numbers by
// value.
func sameValue(got, want any) bool {
	f := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	if a, ok := f(got); ok {
		b, ok := f(want)
		return ok && a == b
	}
	return got == want
}

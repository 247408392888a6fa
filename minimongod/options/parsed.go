package options

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// buildParsed renders the canonical environment as mongod's
// Environment::toBSON does for getCmdLineOpts' "parsed": dotted keys
// become nested documents, keys are in byte order (std::map), numbers keep
// their option type (Int as int32, Double as double) and setParameter is a
// document of strings sorted by name.
func buildParsed(e env) bson.D {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	root := bson.D{}
	for _, k := range keys {
		root = insertDotted(root, strings.Split(k, "."), parsedValue(e[k]))
	}
	return root
}

// parsedValue converts an environment value to its BSON form.
func parsedValue(v any) any {
	params, ok := v.([]Param)
	if !ok {
		return v
	}
	sorted := append([]Param(nil), params...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	d := bson.D{}
	for _, p := range sorted {
		d = append(d, bson.E{Key: p.Name, Value: p.Value})
	}
	return d
}

// insertDotted sets path to v inside d, creating sub-documents.
func insertDotted(d bson.D, path []string, v any) bson.D {
	if len(path) == 1 {
		return append(d, bson.E{Key: path[0], Value: v})
	}
	for i := range d {
		if d[i].Key == path[0] {
			if sub, ok := d[i].Value.(bson.D); ok {
				d[i].Value = insertDotted(sub, path[1:], v)
				return d
			}
		}
	}
	return append(d, bson.E{Key: path[0], Value: insertDotted(bson.D{}, path[1:], v)})
}

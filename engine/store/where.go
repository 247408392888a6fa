package store

import "strings"

// where collects the conditions and arguments of a query's WHERE clause.
type where struct {
	conds []string
	args  []any
}

// eq adds "column = value" when value is not empty.
func (w *where) eq(column, value string) {
	if value != "" {
		w.add(column+" = ?", value)
	}
}

// add adds a condition with its arguments.
func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// sql returns " WHERE ..." ("" without conditions).
func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

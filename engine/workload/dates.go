package workload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// bsonTypeDateTime is BSON's UTC datetime (int64 milliseconds).
const bsonTypeDateTime = 0x09

// DateSpec gives the documents a load or a workload inserts a date field,
// e.g. for a TTL index: Field holds a moment drawn uniformly from
// [From, To], or the time of the insert when From is zero. The field
// comes last, and the document keeps its doc_bytes size.
type DateSpec struct {
	Field string    `json:"field"`
	From  time.Time `json:"from,omitzero"`
	To    time.Time `json:"to,omitzero"`
}

// check checks the field name and the window.
func (d *DateSpec) check() error {
	if d == nil {
		return nil
	}
	switch {
	case d.Field == "" || strings.HasPrefix(d.Field, "$") || strings.ContainsAny(d.Field, ".\x00"):
		return fmt.Errorf("date field %q: want a top-level field name (no '.', not starting with '$')", d.Field)
	case d.Field == "_id" || d.Field == "pad":
		return fmt.Errorf("date field %q: wtd writes that field itself", d.Field)
	case d.From.IsZero() && !d.To.IsZero():
		return errors.New("date: to without from")
	case !d.To.IsZero() && d.To.Before(d.From):
		return fmt.Errorf("date: to %s is before from %s", d.To.Format(time.RFC3339), d.From.Format(time.RFC3339))
	}
	return nil
}

// elemLen is the size of the date element in a document (0 without one).
func (d *DateSpec) elemLen() int {
	if d == nil {
		return 0
	}
	return 1 + len(d.Field) + 1 + 8
}

// pick returns the date of one insert in milliseconds, drawing from u when
// the spec spreads dates over a window.
func (d *DateSpec) pick(u uint64) int64 {
	if d.From.IsZero() {
		return time.Now().UnixMilli()
	}
	from, to := d.From.UnixMilli(), d.To.UnixMilli()
	if d.To.IsZero() || to <= from {
		return from
	}
	return from + int64(u%uint64(to-from+1))
}

// appendDatedDoc appends a padded document (appendPadDoc) with the date
// field of d last, set to ms; without d it is appendPadDoc.
func appendDatedDoc(dst []byte, id int64, n int, r *padRand, d *DateSpec, ms int64) []byte {
	start := len(dst)
	dst = appendPadDoc(dst, id, n, r)
	if d == nil {
		return dst
	}
	dst = dst[:len(dst)-1]
	dst = append(dst, bsonTypeDateTime)
	dst = append(dst, d.Field...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ms))
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// setDocDate changes in place the date of a document that appendDatedDoc
// made with a date.
func setDocDate(doc []byte, ms int64) {
	binary.LittleEndian.PutUint64(doc[len(doc)-9:], uint64(ms))
}

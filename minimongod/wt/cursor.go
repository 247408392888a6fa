package wt

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// Cursor is a WiredTiger cursor over a table with raw byte keys and values
// (key_format=u,value_format=u). Slices it returns alias WiredTiger's memory
// and stay valid only until the next operation on the cursor.
type Cursor struct {
	c *C.WT_CURSOR
	// positioned is false after a reset and after operations that leave
	// no position (insert); Session.Cursor resets only positioned ones.
	positioned bool
}

// Close closes the cursor.
func (c *Cursor) Close() error { return check("WT_CURSOR.close", C.wtd_cursor_close(c.c)) }

// Reset releases the cursor's position.
func (c *Cursor) Reset() error {
	c.positioned = false
	return check("WT_CURSOR.reset", C.wtd_cursor_reset(c.c))
}

// Search finds key and returns its value, or ErrNotFound.
func (c *Cursor) Search(key []byte) ([]byte, error) {
	c.positioned = true
	r := C.wtd_cursor_search(c.c, ptr(key), C.size_t(len(key)))
	if err := check("WT_CURSOR.search", r.ret); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(r.value), int(r.vlen)), nil
}

// SearchNear positions the cursor at key or a neighbour; exact is <0, 0 or
// >0 when the cursor is before, at or after key. ErrNotFound: table empty.
func (c *Cursor) SearchNear(key []byte) (exact int, err error) {
	var e C.int
	c.positioned = true
	if err := check("WT_CURSOR.search_near", C.wtd_cursor_search_near(c.c, ptr(key), C.size_t(len(key)), &e)); err != nil {
		return 0, err
	}
	return int(e), nil
}

// Insert writes key=value (see Session.Cursor for overwrite).
func (c *Cursor) Insert(key, value []byte) error {
	return check("WT_CURSOR.insert", C.wtd_cursor_insert(c.c, ptr(key), C.size_t(len(key)), ptr(value), C.size_t(len(value))))
}

// Update replaces the value of an existing key.
func (c *Cursor) Update(key, value []byte) error {
	c.positioned = true
	return check("WT_CURSOR.update", C.wtd_cursor_update(c.c, ptr(key), C.size_t(len(key)), ptr(value), C.size_t(len(value))))
}

// Remove deletes key.
func (c *Cursor) Remove(key []byte) error {
	c.positioned = true
	return check("WT_CURSOR.remove", C.wtd_cursor_remove(c.c, ptr(key), C.size_t(len(key))))
}

// Next moves to the next record; ErrNotFound at the end.
func (c *Cursor) Next() error {
	c.positioned = true
	return check("WT_CURSOR.next", C.wtd_cursor_next(c.c))
}

// Prev moves to the previous record; ErrNotFound at the start.
func (c *Cursor) Prev() error {
	c.positioned = true
	return check("WT_CURSOR.prev", C.wtd_cursor_prev(c.c))
}

// Key returns the key at the cursor's position.
func (c *Cursor) Key() ([]byte, error) {
	r := C.wtd_cursor_get(c.c, 0)
	if err := check("WT_CURSOR.get_key", r.ret); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(r.key), int(r.klen)), nil
}

// StringKey returns the key at the cursor's position of a cursor whose
// key format is a string (key_format=S, as "metadata:").
func (c *Cursor) StringKey() (string, error) {
	var k *C.char
	if err := check("WT_CURSOR.get_key", C.wtd_cursor_get_str_key(c.c, &k)); err != nil {
		return "", err
	}
	return C.GoString(k), nil
}

// KeyValue returns the key and value at the cursor's position.
func (c *Cursor) KeyValue() (key, value []byte, err error) {
	r := C.wtd_cursor_get(c.c, 1)
	if err := check("WT_CURSOR.get_value", r.ret); err != nil {
		return nil, nil, err
	}
	return unsafe.Slice((*byte)(r.key), int(r.klen)), unsafe.Slice((*byte)(r.value), int(r.vlen)), nil
}

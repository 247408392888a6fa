package mlog

import (
	"errors"
	"os"
	"strconv"
	"time"
)

// OpenError is returned by Open. mongod reports it as fatal log id 20574
// "Error during global initialization" with error code 38 (FileNotOpen).
type OpenError struct {
	Path string
	Msg  string // errmsg as mongod words it
	Err  error  // underlying OS error, if any
}

// Error returns Msg.
func (e *OpenError) Error() string { return e.Msg }

// Unwrap returns the OS error.
func (e *OpenError) Unwrap() error { return e.Err }

// Code and CodeName of the error, ErrorCodes::FileNotOpen.
const (
	FileNotOpenCode     = 38
	FileNotOpenCodeName = "FileNotOpen"
)

// renameLayout is the UTC timestamp suffix mongod appends to the old log
// file when it starts without --logappend (terseCurrentTimeForFilename).
const renameLayout = "2006-01-02T15-04-05"

// Open opens the --logpath file. With appendMode it appends to an existing
// file; otherwise, as mongod does, an existing file is first renamed to
// "<path>.<UTC timestamp>" and a new file is created.
func Open(path string, appendMode bool) (*Logger, error) {
	return openAt(path, appendMode, time.Now())
}

// openAt is Open with the time used for the rename suffix.
func openAt(path string, appendMode bool, now time.Time) (*Logger, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &OpenError{Path: path,
			Msg: "logpath \"" + path + "\" should name a file, not a directory."}
	}
	if !appendMode {
		if err := renameOld(path, now); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return nil, &OpenError{Path: path, Err: err,
			Msg: "Can't initialize rotatable log file :: caused by :: Failed to open " + path}
	}
	l := New(f)
	l.file = f
	return l, nil
}

// renameOld moves an existing log file out of the way, adding a counter
// when the timestamped name is taken.
func renameOld(path string, now time.Time) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	target := path + "." + now.UTC().Format(renameLayout)
	for i := 1; fileExists(target); i++ {
		target = path + "." + now.UTC().Format(renameLayout) + "." + strconv.Itoa(i)
	}
	if err := os.Rename(path, target); err != nil {
		return &OpenError{Path: path, Err: err,
			Msg: "Failed to rename " + path + " to " + target + ": " + err.Error()}
	}
	return nil
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

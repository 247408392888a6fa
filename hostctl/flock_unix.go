//go:build unix

package hostctl

import (
	"errors"
	"os"
	"syscall"
)

// tryFlock takes an exclusive flock on f without blocking; false means
// another open file description holds it.
func tryFlock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unflock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// keepFromChildren marks f close-on-exec, so that the processes this one
// starts (servers) do not inherit it.
func keepFromChildren(f *os.File) { syscall.CloseOnExec(int(f.Fd())) }

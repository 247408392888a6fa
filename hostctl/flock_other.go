//go:build !unix

package hostctl

import (
	"errors"
	"os"
)

func tryFlock(*os.File) (bool, error) {
	return false, errors.New("the experiment lock needs flock, which this system lacks")
}

func unflock(*os.File) {}

func keepFromChildren(*os.File) {}

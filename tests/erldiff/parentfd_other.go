//go:build !linux

package erldiff

import (
	"errors"
	"os"
)

// parentFd needs Linux's pidfd_getfd (see Visible).
func parentFd(pid, fd int) (*os.File, error) {
	return nil, errors.New("erldiff: no pidfd_getfd here")
}

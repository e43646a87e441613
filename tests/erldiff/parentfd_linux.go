package erldiff

import (
	"os"

	"golang.org/x/sys/unix"
)

// parentFd returns process pid's descriptor fd as a file of ours that
// shares its open file description (pidfd_getfd: the offset and flags are
// the same object, not a copy). See Visible.
func parentFd(pid, fd int) (*os.File, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pidfd)
	dup, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(dup), "parent's descriptor"), nil
}

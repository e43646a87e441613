package main

import "golang.org/x/sys/unix"

// sockInq is SIOCINQ of fd: bytes received and not yet read; -1 if the
// kernel does not say.
func sockInq(fd uintptr) int {
	n, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	if err != nil {
		return -1
	}
	return n
}

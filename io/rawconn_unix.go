//go:build unix

// Non-blocking work on a net.Conn's descriptor for the portable backend
// (portable.go's design note, Input and Output), where the OS has one.

package netio

import "syscall"

// waitReadable returns once rc has input, an end of input or an error to
// read, holding no buffer meanwhile (portable.go's design note, Input):
// a one-byte MSG_PEEK leaves the byte queued, and on EAGAIN the RawConn
// waits on the runtime's netpoller. A pending socket error (ECONNRESET)
// is consumed by the peek, as by any read, so it is returned as sockErr
// for the reader to report; err is RawConn's (net.ErrClosed).
func waitReadable(rc syscall.RawConn) (sockErr, err error) {
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		for {
			_, _, perr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
			switch perr {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			case nil:
			default:
				sockErr = perr
			}
			return true
		}
	})
	return sockErr, err
}

// tryWrite writes what the kernel takes of p now, without blocking: a
// write(2) on the connection's non-blocking fd, through RawConn.Control
// (the caller makes sure no other write is in progress). 0, nil when the
// kernel has no room.
func tryWrite(c syscall.Conn, p []byte) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var n int
	var werr error
	if err := rc.Control(func(fd uintptr) {
		for {
			n, werr = syscall.Write(int(fd), p)
			if werr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, nil // closed: the writer goroutine's Write says so
	}
	switch {
	case werr == syscall.EAGAIN:
		return 0, nil
	case werr != nil:
		return 0, werr
	}
	return n, nil
}

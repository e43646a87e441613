//go:build unix

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

//go:build unix

// Non-blocking work on a net.Conn's descriptor for the portable backend
// (portable.go's design note, Input and Output), where the OS has one.

package netio

import (
	"net"
	"syscall"
)

// connFD returns c's descriptor, for reads and writes made on it directly
// (netEndpoint.fd, which says when that is safe); -1 if it has none.
func connFD(c *net.TCPConn) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(f uintptr) { fd = int(f) }) != nil {
		return -1
	}
	return fd
}

// peeker is the one-byte MSG_PEEK of waitReadable, with its results. A
// reader goroutine keeps one, so that its wait makes no closure per call.
type peeker struct {
	b       [1]byte
	n       int
	sockErr error
	f       func(fd uintptr) bool // pk.peek, made once
}

func (pk *peeker) peek(fd uintptr) bool {
	for {
		n, _, perr := syscall.Recvfrom(int(fd), pk.b[:], syscall.MSG_PEEK)
		switch perr {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case nil:
			pk.n = n
		default:
			pk.sockErr = perr
		}
		return true
	}
}

// waitReadable returns once rc has input (n 1), an end of input (n 0) or
// an error to read, holding no buffer meanwhile (portable.go's design
// note, Input): a one-byte MSG_PEEK leaves the byte queued, and on EAGAIN
// the RawConn waits on the runtime's netpoller. A pending socket error
// (ECONNRESET) is consumed by the peek, as by any read, so it is returned
// as sockErr for the reader to report; err is RawConn's (net.ErrClosed).
// pk, if not nil, is the caller's peeker, reused.
func waitReadable(rc syscall.RawConn, pk *peeker) (n int, sockErr, err error) {
	if pk == nil {
		pk = new(peeker)
	}
	if pk.f == nil {
		pk.f = pk.peek
	}
	pk.n, pk.sockErr = 0, nil
	err = rc.Read(pk.f)
	return pk.n, pk.sockErr, err
}

// fdRead reads what fd has into p, without blocking: errAgain when it has
// nothing. The caller makes sure fd is open (netEndpoint.fd).
func fdRead(fd int, p []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, p)
		switch err {
		case nil:
			return n, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, errAgain
		}
		return 0, err
	}
}

// tryWrite writes what the kernel takes of p now, without blocking: a
// write(2) on the connection's non-blocking fd (netEndpoint.fd: the caller
// makes sure it is open and that no other write is in progress). 0, nil
// when the kernel has no room, or there is no fd (then the writer
// goroutine writes it all).
func tryWrite(fd int, p []byte) (int, error) {
	if fd < 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Write(fd, p)
		switch err {
		case nil:
			return n, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, nil
		}
		return 0, err
	}
}

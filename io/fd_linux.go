//go:build linux

// Sockets as non-blocking fds: the endpoint of the epoll and io_uring
// backends (backend.go). Every call is a raw syscall on a descriptor made
// with SOCK_NONBLOCK (rawsys.go); EINTR is retried here, EAGAIN is
// errAgain, so sock.go sees only progress, errAgain or the socket's error.

package netio

import (
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// The event bits (backend.go) are the kernel's: masks pass unchanged.
var (
	_ [0]struct{} = [evIn ^ unix.EPOLLIN]struct{}{}
	_ [0]struct{} = [evOut ^ unix.EPOLLOUT]struct{}{}
	_ [0]struct{} = [evErr ^ unix.EPOLLERR]struct{}{}
	_ [0]struct{} = [evHup ^ unix.EPOLLHUP]struct{}{}
	_ [0]struct{} = [evRdHup ^ unix.EPOLLRDHUP]struct{}{}
	_ [0]struct{} = [evIn ^ unix.POLLIN]struct{}{}
	_ [0]struct{} = [evOut ^ unix.POLLOUT]struct{}{}
	_ [0]struct{} = [evRdHup ^ unix.POLLRDHUP]struct{}{}
)

// fdEndpoint is a non-blocking socket fd. fd is immutable; the fd is
// closed by the backend's remove (under poller.mu, protocol step 2).
type fdEndpoint struct{ fd int }

func (e *fdEndpoint) family() family { return famFD }
func (e *fdEndpoint) String() string { return fmt.Sprintf("fd %d", e.fd) }
func (e *fdEndpoint) close() error   { return unix.Close(e.fd) }
func (e *fdEndpoint) setAbort() {
	_ = unix.SetsockoptLinger(e.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
}
func (e *fdEndpoint) shutdownWrite() error { return unix.Shutdown(e.fd, unix.SHUT_WR) }

func (e *fdEndpoint) read(p []byte) (int, error) {
	for {
		n, err := rawRead(e.fd, p)
		switch err {
		case nil:
			return n, nil
		case unix.EINTR:
		case unix.EAGAIN:
			return 0, errAgain
		default:
			return 0, err
		}
	}
}

func (e *fdEndpoint) write(p []byte) (int, error) {
	for {
		n, err := rawWrite(e.fd, p)
		switch err {
		case nil:
			return n, nil
		case unix.EINTR:
		case unix.EAGAIN:
			return 0, errAgain
		default:
			return 0, err
		}
	}
}

func (e *fdEndpoint) accept() (endpoint, int, error) {
	for {
		nfd, _, err := unix.Accept4(e.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			setNoDelay(nfd)
			return &fdEndpoint{nfd}, nfd, nil
		case unix.EINTR, unix.ECONNABORTED:
		case unix.EAGAIN:
			return nil, 0, errAgain
		default:
			return nil, 0, err
		}
	}
}

func (e *fdEndpoint) connectErr() error {
	soerr, err := unix.GetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	return err
}

// kernelOutput: SIOCOUTQ, the bytes the peer has not acknowledged.
func (e *fdEndpoint) kernelOutput() bool {
	n, err := unix.IoctlGetInt(e.fd, unix.SIOCOUTQ)
	return err == nil && n > 0
}

// finWaiting: BPF_TCP_FIN_WAIT1 is the kernel's TCP_FIN_WAIT1, our FIN
// not yet acknowledged; once the peer has closed its side, the close need
// not wait (the FIN went out behind the data, already in the kernel).
func (e *fdEndpoint) finWaiting(peerClosed bool) bool {
	if peerClosed {
		return false
	}
	ti, err := unix.GetsockoptTCPInfo(e.fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	return err == nil && ti.State == unix.BPF_TCP_FIN_WAIT1
}

func (e *fdEndpoint) localAddr() *net.TCPAddr {
	sa, err := unix.Getsockname(e.fd)
	if err != nil {
		return nil
	}
	return tcpAddr(sa)
}

func (e *fdEndpoint) remoteAddr() *net.TCPAddr {
	sa, err := unix.Getpeername(e.fd)
	if err != nil {
		return nil
	}
	return tcpAddr(sa)
}

// fdListen makes a listening socket on ap.
func fdListen(ap netip.AddrPort) (endpoint, int, error) {
	fd, err := newSocket(ap)
	if err != nil {
		return nil, 0, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, 0, sysErr("listen", err)
	}
	if err := unix.Bind(fd, sockaddr(ap)); err != nil {
		unix.Close(fd)
		return nil, 0, sysErr("listen", err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return nil, 0, sysErr("listen", err)
	}
	return &fdEndpoint{fd}, fd, nil
}

// fdDial starts a non-blocking connect to ap.
func fdDial(ap netip.AddrPort) (endpoint, int, error) {
	fd, err := newSocket(ap)
	if err != nil {
		return nil, 0, err
	}
	setNoDelay(fd)
	err = unix.Connect(fd, sockaddr(ap))
	if err != nil && err != unix.EINPROGRESS && err != unix.EINTR {
		unix.Close(fd)
		return nil, 0, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
	}
	return &fdEndpoint{fd}, fd, nil
}

func newSocket(ap netip.AddrPort) (int, error) {
	domain := unix.AF_INET
	if ap.Addr().Is6() {
		domain = unix.AF_INET6
	}
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, sysErr("socket", err)
	}
	return fd, nil
}

func setNoDelay(fd int) { _ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) }

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

func tcpAddr(sa unix.Sockaddr) *net.TCPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return nil
}

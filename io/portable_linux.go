//go:build linux

// The portable backend's questions to the Linux kernel (portable.go's
// design note, "Lingering"): what the epoll backend asks of its fds,
// asked through the net.Conn's RawConn.

package netio

import (
	"net"

	"golang.org/x/sys/unix"
)

// kernelUnacked is SIOCOUTQ of c: bytes the peer has not acknowledged.
func kernelUnacked(c *net.TCPConn) (n int, known bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}

// finWait1 says whether c's FIN is still unacknowledged (TCP_FIN_WAIT1).
func finWait1(c *net.TCPConn) (waiting, known bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return false, false
	}
	if err := rc.Control(func(fd uintptr) { waiting = fdFinWait1(int(fd)) }); err != nil {
		return false, false
	}
	return waiting, true
}

func fdFinWait1(fd int) bool {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	return err == nil && ti.State == unix.BPF_TCP_FIN_WAIT1
}

// awaitFinAck returns once c's FIN is acknowledged, or c is closed. A
// socket shut down for writing is always writable, and the state change
// at the acknowledgement wakes its waiters: the runtime's netpoller sees
// it as a write edge, so RawConn.Write's wait ends and the check runs
// again.
func awaitFinAck(c *net.TCPConn) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Write(func(fd uintptr) bool { return !fdFinWait1(int(fd)) })
}

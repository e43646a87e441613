//go:build linux

// Syscalls that cannot block, made without telling the Go scheduler.
//
// Design note.
//
// Problem. syscall.Syscall (which unix.Read and unix.Write use) brackets
// the call with entersyscall/exitsyscall: the calling P is marked "in a
// syscall", and the runtime's sysmon thread, finding a P in the same
// syscall at two of its ticks (20 µs apart), hands that P to another
// thread (waking or starting one), and after any such hand-off it keeps
// ticking every 20 µs instead of backing off to 10 ms. An echo server
// makes a few hundred thousand socket syscalls a second; on a loaded
// machine the kernel preempts a thread inside one often enough that
// sysmon hands Ps around all the time. Measured on the 10k-connection
// TCP echo benchmark (2 cores, client in another process; perf stat over
// 2 s of the window): 9,000 context switches in the Colony server against
// 1,900 in a goroutine-per-connection net server, the largest share
// sysmon's own 20 µs sleeps, the rest threads it woke. With the calls
// below: 1,800 against 1,600, and server CPU per round trip 20% lower
// (docs/benchmarks.md, TCP echo).
//
// Invariant. Every call in this file is on a descriptor in non-blocking
// mode (sockets made with SOCK_NONBLOCK, the eventfd with EFD_NONBLOCK),
// or is epoll_wait with a zero timeout: none can sleep in the kernel, so
// each is bounded work, like a call into a library, and may hold its P
// throughout (syscall.RawSyscall), as Go's own runtime does for its
// non-blocking netpoll. The one wait that can block, for the epoll fd to
// become readable, is Go's netpoller's (poller.wait).
//
// Cost. A raw call cannot be preempted: a stop-the-world waits for it to
// return. Each is bounded by what the kernel copies in one call: every
// read is of at most readChunk (64 KiB; Conn.Recv reads a large n in
// such steps), and writes are cut to rawWriteMax (256 KiB; every caller
// loops on a short write), well under a millisecond. A non-blocking call
// may still wait briefly inside the kernel (a socket lock, reclaim): a
// bounded stall, never a sleep on the peer.
//
// Rejected. Keeping syscall.Syscall for the sake of the race detector's
// annotations (unix.Read tells it that the kernel wrote the buffer):
// every buffer here is guarded by a lock or owned by one goroutine, which
// the race detector sees anyway.

package netio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawRead is read(2) on a non-blocking fd.
func rawRead(fd int, p []byte) (int, error) { return rawIO(unix.SYS_READ, fd, p) }

// rawWriteMax bounds one raw write (see Cost above).
const rawWriteMax = 256 << 10

// rawWrite is write(2) on a non-blocking fd, of at most rawWriteMax bytes:
// a short write, which every caller loops on.
func rawWrite(fd int, p []byte) (int, error) {
	return rawIO(unix.SYS_WRITE, fd, p[:min(len(p), rawWriteMax)])
}

// rawIO is read(2) or write(2) (trap) of p on a non-blocking fd.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var b unsafe.Pointer
	if len(p) > 0 {
		b = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(b), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// pollEvents is epoll_pwait(2) with a zero timeout: the events ready now.
func pollEvents(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

//go:build linux

// The io_uring backend (backend.go): readiness from io_uring's multishot
// POLL_ADD on the same non-blocking fds the epoll backend uses, through
// io_uring_setup and io_uring_enter and the mmapped rings, with no cgo and
// no liburing.
//
// Design note.
//
// Problem. epoll costs a syscall per batch of events (epoll_wait) and one
// per registration (epoll_ctl). io_uring posts completions into a ring
// shared with the kernel, read with plain loads: events cost no syscall
// at all when they are already there, and a registration is an SQE. The
// seeds' io_uring planes (writeonce park.c, and the Ruby fiber scheduler
// that cancels and waits before it reuses a buffer) found the hazards:
// a completion that outlives its registration, a submit that silently did
// not happen, and a request still in the kernel when its fd is reused.
//
// Chosen. One ring per poller. Each socket gets one multishot POLL_ADD
// (POLLIN|POLLOUT|POLLRDHUP, edge-triggered as io_uring's poll is unless
// asked for level): a CQE each time the socket's wait queue is woken with
// one of those, so the sock's readable/writable flags work as on epoll
// (poller.go, step 3). The poller waits for the ring fd, which is
// readable while the CQ ring has entries, through Go's netpoller as the
// epoll backend waits for its epoll fd, and reaps the CQ ring in user
// space. An eventfd, polled the same way under a sentinel, wakes it.
//
// Rejected. (a) IORING_OP_RECV/ACCEPT (multishot, provided buffers): the
// data would land in buffers the kernel picks, to be copied into Data as
// now, and a recv in flight is a buffer the kernel may still write, to be
// cancelled and waited for on every SetActive(Off), every Recv's timeout
// and every close; the poll keeps the sock's protocol unchanged and costs
// the same read(2) the epoll backend makes. (b) SQPOLL: a kernel thread
// spinning on a 2-core machine. (c) COOP_TASKRUN or DEFER_TASKRUN: a
// poll's completion runs as task work of the thread that submitted it,
// and a Go thread may sleep in a futex for as long as it likes; without
// them the kernel interrupts that sleep to run it.
//
// What that costs, measured (docs/benchmarks.md, "TCP echo on each IO
// backend"): the kernel wakes each thread that ever submitted a poll to
// run its task work, and Go spreads the submissions over all its threads;
// at 10k connections the server made 17x the epoll backend's voluntary
// context switches (8.8k against 0.5k in a 6 s window), and its CPU per
// round trip is 2-16% above epoll's. Tried and not kept, each against
// this file in one A/B run:
//   - SINGLE_ISSUER | DEFER_TASKRUN, the poller locked to its thread as
//     the one submitter (SQEs from add and remove queued for it, one
//     io_uring_enter a loop that also runs the task work, the poller
//     parked on an eventfd registered with the ring, EVENTFD_DISABLED
//     while it runs): context switches down to epoll's, CPU per round
//     trip within noise of epoll's (median ratio 0.99 at 1k, 1.09 at
//     10k), but in 2 of ~40 samples one connection's first echo never
//     came back (the client's 30 s read timed out): a lost wake-up whose
//     cause was not found. A backend that can lose an event is not kept.
//   - On top of it, a one-shot IORING_OP_RECV with a provided-buffer ring
//     per accepted connection instead of read(2): 1.11-1.25x epoll's CPU
//     per round trip, against 0.84-0.98x without it in the same run (each
//     recv arms and tears down a poll of its own in the kernel). Multishot
//     recv would not, but needs a cancel-and-wait on every passive mode
//     change to bound what a peer can push into user space.
//
// Invariants.
//
//  U1. User data names (slot, gen) of a registration, as epoll's (fd, gen):
//      slot in the low 32 bits, gen in the high ones; gen 0 is a sentinel,
//      never a registration: udWake (the eventfd's poll) and udCancel (an
//      ASYNC_CANCEL's own completion). A CQE is resolved by the poller's
//      generation check, never by a pointer, so a completion for a closed
//      registration whose fd number names another socket by now is a
//      lookup miss (backend.go, invariant 1).
//  U2. Cancel, then wait, then close. An armed poll holds a reference to
//      the file: closing the fd would neither close the socket (no FIN)
//      nor stop the poll. So remove submits IORING_OP_ASYNC_CANCEL for the
//      registration's user data and closes nothing; the fd is closed by the
//      poller goroutine when the poll's last CQE (no IORING_CQE_F_MORE)
//      arrives. Until then the fd number is taken, so it cannot be reused
//      while the kernel may still complete a request on it; busy is true,
//      so the poller does not exit (backend.go, invariant 5), and the last
//      such close wakes it to look again. A Close from any goroutine but
//      the poller's waits for that close (sock.fdGone): a closed socket is
//      closed when Close returns, as on epoll (a Listener closed and
//      listened on again, on the same port, found it still bound).
//  U3. A short submit is a loud failure. io_uring_enter must report the
//      SQE consumed; anything else (an errno, 0) retracts the SQE (the
//      tail is ours until the kernel reads it) and is an error: add
//      returns it to Listen, Dial or Accept; a cancel or re-arm that
//      cannot be submitted is a broken invariant and crashes with a
//      diagnostic (an fd that can never be closed safely, or a socket that
//      would never get another event) instead of losing a wake-up.
//  U4. A multishot poll that ends by itself (its last CQE while not
//      cancelling: the CQ ring overflowed, say) is submitted again under
//      the same user data, and its CQE's events are reported, so no edge
//      is lost; a re-armed poll reports the socket's state at once.
//  U5. The SQ ring has many producers (add and remove, under poller.mu, on
//      any goroutine; re-arms on the poller goroutine): sqMu guards it. The
//      CQ ring has one consumer, the poller goroutine. regs and inflight
//      are guarded by mu, taken after poller.mu and before sqMu, so a
//      re-arm and a cancel of one registration are ordered: either the
//      cancel finds the re-armed poll, or it finds none and the old poll's
//      last CQE, reaped later, sees cancelling (U2).
//
// Lock order: poller.mu -> uringBackend.mu -> uringBackend.sqMu.

package netio

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's io_uring ABI (include/uapi/linux/io_uring.h), the part
// used here: stable by contract.
const (
	iouringOffSQRing = 0
	iouringOffCQRing = 0x8000000
	iouringOffSQEs   = 0x10000000

	iouringSetupCQSize = 1 << 3
	iouringSetupClamp  = 1 << 4

	iouringEnterGetEvents = 1 << 0

	iouringOpPollAdd     = 6
	iouringOpAsyncCancel = 14

	iouringPollAddMulti = 1 << 0 // sqe.len of a POLL_ADD

	iouringCQEFMore = 1 << 1

	iouringSQCQOverflow = 1 << 1 // sq ring flags

	// IORING_FEAT_CQE_SKIP came in Linux 5.17, after multishot poll
	// (5.13) and with NODROP (5.5): a kernel that has it has all this
	// backend uses.
	iouringFeatCQESkip = 1 << 11

	uringSQEntries = 256
	uringCQEntries = 16384
)

type iouringSQOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type iouringCQOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type iouringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  iouringSQOffsets
	cqOff                                                                  iouringCQOffsets
}

type iouringSQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32 // poll32_events, cancel_flags, ...
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad2        uint64
}

type iouringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// The ABI's sizes, checked at compile time.
var (
	_ [0]struct{} = [unsafe.Sizeof(iouringParams{}) ^ 120]struct{}{}
	_ [0]struct{} = [unsafe.Sizeof(iouringSQE{}) ^ 64]struct{}{}
	_ [0]struct{} = [unsafe.Sizeof(iouringCQE{}) ^ 16]struct{}{}
)

// Sentinel user data (U1): gen 0, the slot says which.
const (
	udWake   uint64 = 0
	udCancel uint64 = 1
)

func uringUD(slot int, gen uint32) uint64 { return uint64(uint32(slot)) | uint64(gen)<<32 }

// uringReg is a registration's kernel side (U2): its endpoint, closed
// when the kernel is done with it. Guarded by uringBackend.mu.
type uringReg struct {
	ep         endpoint
	fd         int
	cancelling bool
	gone       chan struct{} // closed once the fd is (sock.fdGone)
}

// testURingSetupErr, if set (tests only), fails newUring: the fallback.
var testURingSetupErr atomic.Pointer[error]

// uringBackend: see the design note. Fields set by newUring are
// immutable; the rest say how they are shared.
type uringBackend struct {
	fd   int
	evfd int // the wake-up; written under poller.mu (wake), read by wait

	sqRing, cqRing, sqeMem []byte // the mmapped rings
	sqHead, sqTail, sqMask *uint32
	sqFlags, sqArray       *uint32
	sqes                   *[uringSQEntries * 4]iouringSQE // indexed by mask; sized for the clamp
	sqEntries              uint32
	cqHead, cqTail, cqMask *uint32
	cqes                   unsafe.Pointer // [cqEntries]iouringCQE

	mu       sync.Mutex // guards regs, inflight (U5)
	regs     map[uint64]*uringReg
	inflight int // registrations cancelled whose last CQE has not come

	sqMu sync.Mutex // guards the SQ ring's tail and slots (U5)

	// Owned by the poller goroutine.
	ringf    *os.File
	raw      syscall.RawConn
	deadline time.Time
}

// newUring sets up a ring; an error means io_uring is not to be had here
// (the caller falls back to epoll).
func newUring() (_ *uringBackend, err error) {
	if p := testURingSetupErr.Load(); p != nil {
		return nil, *p
	}
	params := iouringParams{flags: iouringSetupCQSize | iouringSetupClamp, cqEntries: uringCQEntries}
	r1, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uringSQEntries, uintptr(unsafe.Pointer(&params)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	b := &uringBackend{fd: int(r1), evfd: -1, regs: map[uint64]*uringReg{}}
	defer func() {
		if err != nil {
			b.unmap()
			if b.evfd >= 0 {
				unix.Close(b.evfd)
			}
			if b.ringf != nil {
				b.ringf.Close()
			} else {
				unix.Close(b.fd)
			}
		}
	}()
	if params.features&iouringFeatCQESkip == 0 {
		return nil, fmt.Errorf("io_uring: kernel older than 5.17 (features %#x): no multishot poll", params.features)
	}
	if params.sqEntries > uringSQEntries*4 {
		return nil, fmt.Errorf("io_uring_setup: %d SQ entries, more than asked", params.sqEntries)
	}
	sq, cq := params.sqOff, params.cqOff
	mmap := func(off int64, size int) ([]byte, error) {
		m, err := unix.Mmap(b.fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("io_uring mmap at %#x: %w", off, err)
		}
		return m, nil
	}
	if b.sqRing, err = mmap(iouringOffSQRing, int(sq.array+params.sqEntries*4)); err != nil {
		return nil, err
	}
	if b.cqRing, err = mmap(iouringOffCQRing, int(cq.cqes+params.cqEntries*uint32(unsafe.Sizeof(iouringCQE{})))); err != nil {
		return nil, err
	}
	if b.sqeMem, err = mmap(iouringOffSQEs, int(params.sqEntries)*int(unsafe.Sizeof(iouringSQE{}))); err != nil {
		return nil, err
	}
	u32 := func(m []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&m[off])) }
	b.sqHead, b.sqTail, b.sqMask = u32(b.sqRing, sq.head), u32(b.sqRing, sq.tail), u32(b.sqRing, sq.ringMask)
	b.sqFlags, b.sqArray = u32(b.sqRing, sq.flags), u32(b.sqRing, sq.array)
	b.sqEntries = params.sqEntries
	b.sqes = (*[uringSQEntries * 4]iouringSQE)(unsafe.Pointer(&b.sqeMem[0]))
	b.cqHead, b.cqTail, b.cqMask = u32(b.cqRing, cq.head), u32(b.cqRing, cq.tail), u32(b.cqRing, cq.ringMask)
	b.cqes = unsafe.Pointer(&b.cqRing[cq.cqes])

	if b.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := b.submit(wakeSQE(b.evfd)); err != nil {
		return nil, err
	}
	if b.ringf, b.raw, err = pollableFile(b.fd, "io_uring"); err != nil {
		b.ringf = nil // pollableFile closed the fd
		b.fd = -1
		return nil, err
	}
	return b, nil
}

func (b *uringBackend) unmap() {
	for _, m := range [][]byte{b.sqRing, b.cqRing, b.sqeMem} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	b.sqRing, b.cqRing, b.sqeMem = nil, nil, nil
}

// pollSQE is a multishot POLL_ADD of fd for input, output and the peer's
// hangup (errors and hangups are always reported).
func pollSQE(fd int, ud uint64) iouringSQE {
	return iouringSQE{
		opcode:   iouringOpPollAdd,
		fd:       int32(fd),
		len:      iouringPollAddMulti,
		opFlags:  unix.POLLIN | unix.POLLOUT | unix.POLLRDHUP,
		userData: ud,
	}
}

// wakeSQE is the eventfd's poll: input only (an eventfd is always
// writable, and a wake-up that nobody sent would let a fresh poller
// find nothing registered and exit).
func wakeSQE(evfd int) iouringSQE {
	sqe := pollSQE(evfd, udWake)
	sqe.opFlags = unix.POLLIN
	return sqe
}

// submit puts sqe on the SQ ring and has the kernel consume it (U3). Any
// goroutine; takes sqMu.
func (b *uringBackend) submit(sqe iouringSQE) error {
	b.sqMu.Lock()
	defer b.sqMu.Unlock()
	tail := *b.sqTail // ours: only submitters under sqMu write it
	if head := atomic.LoadUint32(b.sqHead); tail-head >= b.sqEntries {
		// Every earlier SQE was consumed by its own enter (below): a full
		// ring is a broken invariant.
		return fmt.Errorf("netio: io_uring SQ ring full (head %d, tail %d, %d entries)", head, tail, b.sqEntries)
	}
	idx := tail & *b.sqMask
	b.sqes[idx] = sqe
	*(*uint32)(unsafe.Add(unsafe.Pointer(b.sqArray), 4*uintptr(idx))) = idx
	atomic.StoreUint32(b.sqTail, tail+1) // publishes the SQE to the kernel's enter
	for {
		// A POLL_ADD or ASYNC_CANCEL submission does not sleep: a raw
		// call, as rawsys.go's.
		n, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(b.fd), 1, 0, 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e == 0 && n == 1 {
			return nil
		}
		// Short: the kernel did not take the SQE. Take it back (the
		// kernel reads the tail only inside enter), so that no later
		// enter submits it behind the caller's back.
		atomic.StoreUint32(b.sqTail, tail)
		var err error = e
		if e != 0 {
			n = 0
		} else {
			err = errors.New("no error")
		}
		return fmt.Errorf("netio: io_uring_enter submitted %d of 1 SQE (op %d, user data %#x): %w", n, sqe.opcode, sqe.userData, err)
	}
}

func (b *uringBackend) kind() Backend { return Uring }

// add arms a multishot poll for s (U1). poller.mu held.
func (b *uringBackend) add(s *sock) error {
	ud := uringUD(s.fd, s.gen)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.submit(pollSQE(s.fd, ud)); err != nil {
		return err
	}
	b.regs[ud] = &uringReg{ep: s.ep, fd: s.fd}
	return nil
}

// remove cancels s's poll; the poller goroutine closes s's fd when the
// poll's last CQE comes (U2). poller.mu held; the table entry is gone.
func (b *uringBackend) remove(s *sock) error {
	ud := uringUD(s.fd, s.gen)
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.regs[ud]
	if r == nil || r.cancelling {
		panic(fmt.Sprintf("netio: io_uring remove of fd %d gen %d: no armed registration (broken invariant: remove is called once per registered sock)", s.fd, s.gen))
	}
	r.cancelling = true
	r.gone = make(chan struct{})
	s.fdGone = r.gone // s.mu held (closeFdLocked): close waits for it
	b.inflight++
	sqe := iouringSQE{opcode: iouringOpAsyncCancel, fd: -1, addr: ud, userData: udCancel}
	if err := b.submit(sqe); err != nil {
		panic(fmt.Sprintf("netio: io_uring cancel of fd %d gen %d: %v (broken invariant: the fd could never be closed safely)", s.fd, s.gen, err))
	}
	return nil
}

// busy: cancelled registrations whose last CQE has not come (U2).
func (b *uringBackend) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight > 0
}

// wake writes the eventfd (poller.mu held: close closes evfd under it).
func (b *uringBackend) wake() {
	var one = [8]byte{1}
	_, _ = rawWrite(b.evfd, one[:])
}

// close tears the ring down at the poller's exit: nothing is registered
// and nothing is in flight, so no fd of a socket is left in it.
func (b *uringBackend) close() {
	unix.Close(b.evfd)
	b.unmap()
	b.ringf.Close()
}

// wait reaps the CQ ring, and while it is empty parks on Go's netpoller
// until the ring fd is readable or deadline passes.
func (b *uringBackend) wait(evs []ioEvent, deadline time.Time) (int, error) {
	if !deadline.Equal(b.deadline) {
		if err := b.ringf.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		b.deadline = deadline
	}
	var n int
	var err error
	rerr := b.raw.Read(func(uintptr) bool {
		n, err = b.reap(evs)
		return n > 0 || err != nil
	})
	if rerr != nil {
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			return 0, nil
		}
		return 0, rerr
	}
	return n, err
}

// reap turns the CQEs ready into events, at most len(evs) of them (a CQE
// that makes none still counts toward the ring's progress).
func (b *uringBackend) reap(evs []ioEvent) (n int, err error) {
	mask := *b.cqMask
	for {
		head := *b.cqHead // ours: the poller goroutine is the only consumer
		tail := atomic.LoadUint32(b.cqTail)
		for ; head != tail && n < len(evs) && err == nil; head++ {
			cqe := *(*iouringCQE)(unsafe.Add(b.cqes, uintptr(head&mask)*unsafe.Sizeof(iouringCQE{})))
			ev, ok, cerr := b.complete(cqe)
			if ok {
				evs[n] = ev
				n++
			}
			err = cerr
		}
		atomic.StoreUint32(b.cqHead, head) // the slots are the kernel's again
		if n == len(evs) || err != nil || atomic.LoadUint32(b.sqFlags)&iouringSQCQOverflow == 0 {
			return n, err
		}
		// CQEs the ring had no room for wait in the kernel: have it move
		// them into the ring (GETEVENTS, nothing to wait for), and reap
		// again.
		for {
			_, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(b.fd), 0, 0, iouringEnterGetEvents, 0, 0)
			if e != unix.EINTR {
				break
			}
		}
	}
}

// complete handles one CQE: an event for the poller (ok), or the end of a
// cancelled registration (its fd closed, U2), or a re-arm (U4).
func (b *uringBackend) complete(cqe iouringCQE) (ev ioEvent, ok bool, err error) {
	more := cqe.flags&iouringCQEFMore != 0
	switch cqe.userData {
	case udWake:
		var cnt [8]byte
		_, _ = rawRead(b.evfd, cnt[:]) // reset before the poller takes its lists (poller.go, step 4)
		if !more {
			if err := b.submit(wakeSQE(b.evfd)); err != nil {
				return ev, false, fmt.Errorf("re-arming the wake-up: %w", err)
			}
		}
		return ioEvent{}, true, nil
	case udCancel:
		return ev, false, nil // the poll's own last CQE is what U2 waits for
	}
	slot, gen := int32(uint32(cqe.userData)), uint32(cqe.userData>>32)
	ev = ioEvent{slot: slot, gen: gen}
	if cqe.res > 0 {
		ev.mask = uint32(cqe.res)
	}
	if more {
		return ev, true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.regs[cqe.userData]
	switch {
	case r == nil:
		return ev, false, fmt.Errorf("io_uring CQE for unknown user data %#x (res %d)", cqe.userData, cqe.res)
	case r.cancelling:
		delete(b.regs, cqe.userData)
		_ = r.ep.close() // the kernel is done with the fd: now its number may be reused
		close(r.gone)
		b.inflight--
		if b.inflight == 0 {
			return ioEvent{}, true, nil // a wake-up: the poller may exit now
		}
		return ev, false, nil
	case cqe.res == -int32(unix.EBADF), cqe.res == -int32(unix.EINVAL):
		return ev, false, fmt.Errorf("io_uring poll of fd %d gen %d: %v (broken invariant: the fd is closed only after its poll ends, and the kernel has multishot poll)", r.fd, gen, unix.Errno(-cqe.res))
	}
	// Ended by itself (U4): arm it again, and report what it said.
	if err := b.submit(pollSQE(r.fd, cqe.userData)); err != nil {
		return ev, false, fmt.Errorf("re-arming fd %d gen %d: %w", r.fd, gen, err)
	}
	if cqe.res < 0 {
		ev.mask = evIn | evOut // an error ended it: let the sock look
	}
	return ev, true, nil
}

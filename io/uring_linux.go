//go:build linux

// The io_uring backend (backend.go): readiness from io_uring's multishot
// POLL_ADD on the same non-blocking fds the epoll backend uses, through
// io_uring_setup, io_uring_enter and the mmapped rings, with no cgo and
// no liburing.
//
// Design note.
//
// Problem. The epoll backend's wait is two waits: Go's netpoller sleeps
// in epoll_wait until the backend's epoll fd is readable, readies the
// poller goroutine, which then calls epoll_wait on its own fd to learn
// which sockets. io_uring posts completions into a ring shared with the
// kernel, read with plain loads, and one io_uring_enter both submits
// requests and sleeps until a completion comes. The seeds' io_uring
// planes (writeonce park.c, and the Ruby fiber scheduler that cancels
// and waits before it reuses a buffer) found the hazards: a completion
// that outlives its registration, a submit that silently did not happen,
// and a request still in the kernel when its fd is reused.
//
// The cost that decides the shape. A poll's wake-up becomes a CQE through
// task work of the thread that submitted the poll. With the default setup
// the kernel queues that work to the submitting thread and, if it sleeps
// (a Go thread often does, in a futex), wakes it to run it. Go moves
// goroutines between threads, so polls submitted from wherever Listen,
// Dial and Accept ran were spread over every thread of the process: the
// 1k-connection TCP echo made 11x the epoll backend's voluntary context
// switches and 1.37-1.38x its server CPU per round trip
// (docs/benchmarks.md, "TCP echo on each IO backend").
//
// Chosen. One ring per poller, set up IORING_SETUP_SINGLE_ISSUER |
// DEFER_TASKRUN (Linux 6.1): task work is never run behind our back; it
// waits in the ring until the one submitter calls io_uring_enter with
// GETEVENTS. The submitter is the poller goroutine, locked to its thread
// (runtime.LockOSThread, from its first wait to the backend's close; the
// ring is created disabled and enabled there, which makes that thread the
// ring's submitter). It waits in io_uring_enter itself (GETEVENTS,
// min_complete 1, the deadline as EXT_ARG's timeout): the kernel's own
// wait loop runs the deferred task work as it arrives and returns once a
// CQE is posted, so an event costs one syscall on the poller's side and
// no netpoller round. The wait is a nap that keeps the P, then a sleep
// that gives it up (U8). Every SQE goes through the poller: add and
// remove, on any goroutine, queue theirs (pending) and wake it; the
// poller moves what is queued into the SQ ring and submits it with the
// enter it waits in. Each socket gets one multishot POLL_ADD
// (POLLIN|POLLOUT|POLLRDHUP, edge-triggered as io_uring's poll is unless
// asked for level): a CQE each time the socket's wait queue is woken with
// one of those, so the sock's readable/writable flags work as on epoll
// (poller.go, step 3). An
// eventfd with a multishot poll of its own, under a sentinel, is the
// wake-up: a write to it is a poll wake-up like any socket's, so a wake
// reaches the sleeping enter by the same path as an event.
//
// Rejected. (a) IORING_OP_RECV/ACCEPT (multishot, provided buffers): the
// data would land in buffers the kernel picks, to be copied into Data as
// now, and a recv in flight is a buffer the kernel may still write, to be
// cancelled and waited for on every SetActive(Off), every Recv's timeout
// and every close; the poll keeps the sock's protocol unchanged and costs
// the same read(2) the epoll backend makes. A one-shot recv per message
// into a provided-buffer ring, tried, cost 1.11-1.25x epoll's CPU per
// round trip (each arms and tears down a poll of its own in the kernel).
// (b) SQPOLL: a kernel thread spinning on a 2-core machine. (c) The
// default task work (this backend's first form): see above. (d) Waiting
// for an eventfd registered with the ring (IORING_REGISTER_EVENTFD),
// through Go's netpoller, with EVENTFD_DISABLED while the poller runs and
// IORING_SQ_TASKRUN read before it parks (tried): the kernel signals that
// eventfd only when task work arrives in an empty list, so the park's
// check had to see every way work could be left over (the kernel runs at
// most 20 items an enter and keeps the rest), and in 2 of ~40 echo
// samples one connection's first echo never came back; a netpoller round,
// an eventfd read and an enter per batch also cost more than epoll's two
// waits. The kernel's own wait loop has none of those races. (e) Only
// the sleep that gives the P up (syscall.Syscall): while the P sits in a
// syscall, sysmon ticks every 20 us and hands it to another thread, and
// the locked poller thread then waits to get one back (runtime.stopm,
// startlockedm): 1.09-1.11x epoll's server CPU per round trip in the run
// that measured the nap at 0.96-1.01x. (f) A multishot RECV per
// connection into a provided-buffer ring, the input queued in user space
// up to a bound and the recv cancelled past it (tried on top of the
// nap): within noise of the poll and read(2) (1.01-1.02x epoll's CPU
// against 0.96-1.06x in one run), 3-6 MiB more peak RSS at 10k
// connections, and every read path, the dial's SO_ERROR (which a recv
// consumes) and the close's cancel made aware of it.
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
//      nor stop the poll. So remove queues IORING_OP_ASYNC_CANCEL for the
//      registration's user data and closes nothing; the fd is closed by the
//      poller goroutine when the poll's last CQE (no IORING_CQE_F_MORE)
//      arrives. Until then the fd number is taken, so it cannot be reused
//      while the kernel may still complete a request on it; busy is true,
//      so the poller does not exit (backend.go, invariant 5), and the last
//      such close wakes it to look again. A Close from any goroutine but
//      the poller's waits for that close (sock.fdGone): a closed socket is
//      closed when Close returns, as on epoll (a Listener closed and
//      listened on again, on the same port, found it still bound).
//  U3. A short submit is never a lost request. What the kernel consumed
//      is read from the SQ ring's head, not inferred from the return
//      value; an SQE it did not consume stays in the ring and goes with
//      the next enter. The kernel's refusals that pass (EAGAIN, EBUSY: no
//      memory or CQ room for now) are retried after the CQ ring is
//      reaped; any other error of an enter that had SQEs to submit is
//      returned, naming the first SQE refused, and the poller crashes with
//      that diagnostic (a registration that would never get an event, or
//      an fd that could never be closed safely) instead of going on
//      without it. SUBMIT_ALL: an SQE that fails fails in its own CQE.
//  U4. A multishot poll that ends by itself (its last CQE while not
//      cancelling: the CQ ring overflowed, say) is queued again under the
//      same user data, and its CQE's events are reported, so no edge is
//      lost; a re-armed poll reports the socket's state at once.
//  U5. Only the poller goroutine, on its locked thread, touches the SQ
//      ring and calls io_uring_enter (SINGLE_ISSUER requires it; another
//      thread's enter fails with EEXIST). sqMu guards pending, the
//      hand-off from add and remove, which then wake the poller (U6).
//      regs and inflight are guarded by mu, taken after poller.mu and
//      before sqMu, so a re-arm and a cancel of one registration are
//      ordered: either the cancel finds the re-armed poll, or it finds
//      none and the old poll's last CQE, reaped later, sees cancelling
//      (U2).
//  U6. No lost wake-up. woken is set by the wake that writes the eventfd
//      (only the one that finds it clear writes), and cleared by the
//      poller when it reports a wake-up: so while it is set, a write is on
//      its way to the eventfd's poll, whose CQE ends any enter that sleeps
//      meanwhile. The poller reports a wake-up for a set woken before it
//      sleeps, so a wake that found it set (no write) is seen then. The
//      sleep itself is the kernel's: io_uring_enter(GETEVENTS, 1) runs the
//      deferred task work before it sleeps and as it arrives, and sleeps
//      only while the CQ ring, read past the head the poller stored, is
//      empty and no task work is pending.
//  U8. The poller's P is held at most uringNap while its thread sleeps.
//      A wait with nothing to report first naps: io_uring_enter as a raw
//      syscall (rawsys.go) with a timeout of at most uringNap (50 us), as
//      a goroutine computing that long would hold it; under load the
//      next event comes within it, and sysmon sees no P in a syscall.
//      Only then does it sleep with syscall.Syscall6, which gives the P
//      up, until the event or the deadline. A nap is interrupted by the
//      runtime's preemption signal like any syscall (EINTR), so a
//      stop-the-world waits for it at most uringNap.
//
// Lock order: poller.mu -> uringBackend.mu -> uringBackend.sqMu.

package netio

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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

	iouringSetupCQSize       = 1 << 3
	iouringSetupClamp        = 1 << 4
	iouringSetupRDisabled    = 1 << 6
	iouringSetupSubmitAll    = 1 << 7
	iouringSetupSingleIssuer = 1 << 12
	iouringSetupDeferTaskrun = 1 << 13

	iouringEnterGetEvents = 1 << 0
	iouringEnterExtArg    = 1 << 3

	iouringRegisterEnableRings = 12

	iouringOpPollAdd     = 6
	iouringOpAsyncCancel = 14

	iouringPollAddMulti = 1 << 0 // sqe.len of a POLL_ADD

	iouringCQEFMore = 1 << 1

	iouringSQCQOverflow = 1 << 1 // sq ring flags

	// IORING_FEAT_CQE_SKIP came in Linux 5.17, after multishot poll
	// (5.13), NODROP (5.5) and EXT_ARG (5.11); DEFER_TASKRUN (6.1) is
	// checked by io_uring_setup itself.
	iouringFeatCQESkip = 1 << 11
	iouringFeatExtArg  = 1 << 8

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

// iouringSQE is struct io_uring_sqe; the fields netio never sets keep the
// kernel's layout.
//
//lint:ignore U1000 the kernel's layout, whether or not netio sets a field
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

// iouringGetEventsArg is struct io_uring_getevents_arg (EXT_ARG): ts
// points to a kernelTimespec, a relative timeout.
type iouringGetEventsArg struct {
	sigmask     uint64
	sigmaskSz   uint32
	minWaitUsec uint32
	ts          uint64
}

type kernelTimespec struct{ sec, nsec int64 }

// The ABI's sizes, checked at compile time.
var (
	_ [0]struct{} = [unsafe.Sizeof(iouringParams{}) ^ 120]struct{}{}
	_ [0]struct{} = [unsafe.Sizeof(iouringSQE{}) ^ 64]struct{}{}
	_ [0]struct{} = [unsafe.Sizeof(iouringCQE{}) ^ 16]struct{}{}
	_ [0]struct{} = [unsafe.Sizeof(iouringGetEventsArg{}) ^ 24]struct{}{}
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
	evfd int // the wake-up; written under poller.mu (wake)

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

	sqMu    sync.Mutex   // guards pending (U5)
	pending []iouringSQE // queued by add, remove and re-arms, for the poller to submit

	woken atomic.Bool // a wake's eventfd write is on its way (U6)

	// Owned by the poller goroutine.
	started bool // locked to its thread, the ring enabled
	arg     iouringGetEventsArg
	ts      kernelTimespec // arg.ts points here
}

// newUring sets up a ring; an error means io_uring is not to be had here
// (the caller falls back to epoll). The ring is disabled until the
// poller goroutine's first wait enables it (start).
func newUring() (_ *uringBackend, err error) {
	if p := testURingSetupErr.Load(); p != nil {
		return nil, *p
	}
	params := iouringParams{
		flags: iouringSetupCQSize | iouringSetupClamp | iouringSetupRDisabled | iouringSetupSubmitAll |
			iouringSetupSingleIssuer | iouringSetupDeferTaskrun,
		cqEntries: uringCQEntries,
	}
	r1, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uringSQEntries, uintptr(unsafe.Pointer(&params)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup (single issuer, deferred task work: Linux 6.1): %w", e)
	}
	b := &uringBackend{fd: int(r1), evfd: -1, regs: map[uint64]*uringReg{}}
	defer func() {
		if err != nil {
			b.unmap()
			if b.evfd >= 0 {
				unix.Close(b.evfd)
			}
			unix.Close(b.fd)
		}
	}()
	if want := uint32(iouringFeatCQESkip | iouringFeatExtArg); params.features&want != want {
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
	b.pending = append(b.pending, wakeSQE(b.evfd)) // the first SQE the poller submits
	return b, nil
}

// start locks the poller goroutine to its thread and enables the ring
// there, which makes that thread the ring's one submitter (U5). On the
// poller goroutine, at its first wait; close unlocks it.
func (b *uringBackend) start() error {
	if b.started {
		return nil
	}
	runtime.LockOSThread()
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(b.fd), iouringRegisterEnableRings, 0, 0, 0, 0); e != 0 {
		runtime.UnlockOSThread()
		return fmt.Errorf("io_uring_register enable rings: %w", e)
	}
	b.started = true
	return nil
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
// find nothing registered and exit). Its counter is never read back:
// each write wakes the poll's wait queue whatever the count, and a
// 64-bit counter does not fill.
func wakeSQE(evfd int) iouringSQE {
	sqe := pollSQE(evfd, udWake)
	sqe.opFlags = unix.POLLIN
	return sqe
}

// queue hands sqe to the poller goroutine, the one submitter (U5). Any
// goroutine; the caller wakes the poller unless it is the poller.
func (b *uringBackend) queue(sqe iouringSQE) {
	b.sqMu.Lock()
	b.pending = append(b.pending, sqe)
	b.sqMu.Unlock()
}

// fill moves queued SQEs into the SQ ring, as many as it has room for,
// and returns how many SQEs the ring holds that the kernel has not
// consumed (U3: those of an earlier enter that it refused included) and
// whether more wait in pending for room. On the poller goroutine.
func (b *uringBackend) fill() (k uint32, more bool) {
	tail := *b.sqTail // ours: the poller is the only submitter
	head := atomic.LoadUint32(b.sqHead)
	b.sqMu.Lock()
	n := min(uint32(len(b.pending)), b.sqEntries-(tail-head))
	for i := range n {
		idx := (tail + i) & *b.sqMask
		b.sqes[idx] = b.pending[i]
		*(*uint32)(unsafe.Add(unsafe.Pointer(b.sqArray), 4*uintptr(idx))) = idx
	}
	rest := copy(b.pending, b.pending[n:])
	clear(b.pending[rest:])
	b.pending = b.pending[:rest]
	b.sqMu.Unlock()
	atomic.StoreUint32(b.sqTail, tail+n) // publishes the SQEs to the kernel's enter
	return tail + n - head, rest > 0
}

// enterMode is how an enter waits for a CQE (U8): not at all, a nap
// that keeps the P, or a sleep that gives it up.
type enterMode int

const (
	enterNoWait enterMode = iota
	enterNap
	enterSleep
)

// uringNap bounds a nap (U8): the longest the poller holds a P while
// its thread sleeps in the kernel.
const uringNap = 50 * time.Microsecond

// enter submits the k unconsumed SQEs of the ring and runs the deferred
// task work (GETEVENTS); a nap or a sleep also waits for a CQE, at most
// timeout (a nap's is at most uringNap; a sleep's 0 is no limit). It
// returns the errno of the call, after U3's check of what was consumed.
func (b *uringBackend) enter(k uint32, mode enterMode, timeout time.Duration) (unix.Errno, error) {
	head := atomic.LoadUint32(b.sqHead)
	var minComplete, argp, argsz uintptr
	flags := uintptr(iouringEnterGetEvents)
	if mode != enterNoWait {
		minComplete = 1
		if timeout > 0 {
			// b.ts and b.arg live in b, which the kernel reads only
			// during the call.
			b.ts = kernelTimespec{sec: int64(timeout / time.Second), nsec: int64(timeout % time.Second)}
			b.arg = iouringGetEventsArg{ts: uint64(uintptr(unsafe.Pointer(&b.ts)))}
			flags |= iouringEnterExtArg
			argp, argsz = uintptr(unsafe.Pointer(&b.arg)), unsafe.Sizeof(b.arg)
		}
	}
	var e unix.Errno
	if mode == enterSleep {
		_, _, e = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(b.fd), uintptr(k), minComplete, flags, argp, argsz)
	} else {
		// Submitting and running task work do not sleep, and a nap is at
		// most uringNap: raw calls that keep the P, as rawsys.go's and as
		// a goroutine computing that long would (U8).
		_, _, e = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(b.fd), uintptr(k), minComplete, flags, argp, argsz)
	}
	consumed := atomic.LoadUint32(b.sqHead) - head
	if consumed == k {
		return e, nil
	}
	switch e {
	case unix.EAGAIN, unix.EBUSY, unix.EINTR, unix.ETIME:
		return e, nil // the rest goes with the next enter, after a reap
	}
	var err error = e
	if e == 0 {
		err = errors.New("no error")
	}
	first := b.sqes[(head+consumed)&*b.sqMask]
	return e, fmt.Errorf("netio: io_uring_enter submitted %d of %d SQEs (the first refused: op %d, user data %#x): %w", consumed, k, first.opcode, first.userData, err)
}

func (b *uringBackend) kind() Backend { return Uring }

// add arms a multishot poll for s (U1). poller.mu held.
func (b *uringBackend) add(s *sock) error {
	ud := uringUD(s.fd, s.gen)
	b.mu.Lock()
	b.regs[ud] = &uringReg{ep: s.ep, fd: s.fd}
	b.queue(pollSQE(s.fd, ud)) // a refused submit crashes the poller, loudly (U3)
	b.mu.Unlock()
	b.wake()
	return nil
}

// remove cancels s's poll; the poller goroutine closes s's fd when the
// poll's last CQE comes (U2). poller.mu held; the table entry is gone.
func (b *uringBackend) remove(s *sock) error {
	ud := uringUD(s.fd, s.gen)
	b.mu.Lock()
	r := b.regs[ud]
	if r == nil || r.cancelling {
		b.mu.Unlock()
		panic(fmt.Sprintf("netio: io_uring remove of fd %d gen %d: no armed registration (broken invariant: remove is called once per registered sock)", s.fd, s.gen))
	}
	r.cancelling = true
	r.gone = make(chan struct{})
	s.fdGone = r.gone // s.mu held (closeFdLocked): close waits for it
	b.inflight++
	b.queue(iouringSQE{opcode: iouringOpAsyncCancel, fd: -1, addr: ud, userData: udCancel})
	b.mu.Unlock()
	b.wake()
	return nil
}

// busy: cancelled registrations whose last CQE has not come (U2).
func (b *uringBackend) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight > 0
}

// wake makes the poller's wait return with a wake-up (U6). poller.mu
// held: close closes evfd under it.
func (b *uringBackend) wake() {
	if !b.woken.Swap(true) {
		var one = [8]byte{1}
		_, _ = rawWrite(b.evfd, one[:]) // EAGAIN only if the counter is saturated: never, at one write a wake
	}
}

// close tears the ring down at the poller's exit, on the poller goroutine:
// nothing is registered and nothing is in flight, so no fd of a socket is
// left in it.
func (b *uringBackend) close() {
	unix.Close(b.evfd)
	b.unmap()
	unix.Close(b.fd)
	if b.started {
		b.started = false
		runtime.UnlockOSThread()
	}
}

// wait submits what is queued, runs the kernel's deferred task work and
// reaps the completions; while there are none, it sleeps in
// io_uring_enter until a CQE comes or deadline passes (U6).
func (b *uringBackend) wait(evs []ioEvent, deadline time.Time) (int, error) {
	if err := b.start(); err != nil {
		return 0, err
	}
	napped := false
	for {
		n := 0
		if b.woken.Swap(false) { // before the poller takes its lists (poller.go, step 4)
			evs[0] = ioEvent{}
			n = 1
		}
		m, err := b.reap(evs[n:])
		n += m
		if err != nil {
			return n, err
		}
		k, more := b.fill()
		if n > 0 && k == 0 {
			return n, nil // the kernel's task work waits for the next enter
		}
		mode := enterNoWait
		var timeout time.Duration
		if n == 0 && !more {
			mode = enterSleep
			if !deadline.IsZero() {
				if timeout = time.Until(deadline); timeout <= 0 {
					mode = enterNoWait
				}
			}
			if mode == enterSleep && !napped { // U8: a nap first
				mode, napped = enterNap, true
				if timeout <= 0 || timeout > uringNap {
					timeout = uringNap
				}
			}
		}
		e, err := b.enter(k, mode, timeout)
		if err != nil {
			return n, err
		}
		m, err = b.reap(evs[n:])
		n += m
		if n > 0 || err != nil {
			return n, err
		}
		if (e == unix.ETIME && mode == enterSleep) || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			return 0, nil
		}
	}
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
		if !more {
			b.queue(wakeSQE(b.evfd)) // the poller's own: submitted before it sleeps
		}
		b.woken.Store(false) // U6: a wake after this writes again
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
	// Ended by itself (U4): arm it again (the poller's next enter), and
	// report what it said.
	b.queue(pollSQE(r.fd, cqe.userData))
	if cqe.res < 0 {
		ev.mask = evIn | evOut // an error ended it: let the sock look
	}
	return ev, true, nil
}

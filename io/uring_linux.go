//go:build linux

// The io_uring backend (backend.go): readiness from io_uring's multishot
// POLL_ADD on the same non-blocking fds the epoll backend uses, through
// io_uring_setup, io_uring_enter and the mmapped rings, with no cgo and
// no liburing.
//
// Design note.
//
// Problem. epoll costs a syscall per batch of events (epoll_wait) and one
// per registration (epoll_ctl). io_uring posts completions into a ring
// shared with the kernel, read with plain loads, and takes registrations
// as SQEs, many per io_uring_enter. The seeds' io_uring planes (writeonce
// park.c, and the Ruby fiber scheduler that cancels and waits before it
// reuses a buffer) found the hazards: a completion that outlives its
// registration, a submit that silently did not happen, and a request
// still in the kernel when its fd is reused.
//
// The cost that decides it. A poll's wake-up is turned into a CQE by task
// work of the thread that submitted the request. With the default setup
// the kernel queues that work to the submitting thread and, if it sleeps
// (a Go thread often does, in a futex), wakes it to run it, then the CQE
// wakes whoever waits for the ring. Go moves goroutines between threads,
// so the polls of 10k connections were spread over every thread the
// submitting goroutines had run on, and the TCP echo at 10k connections
// made 17x the voluntary context switches of the epoll backend (8.8k
// against 0.5k over a 6 s window), and 2-16% more server CPU per round
// trip. So:
//
// Chosen. One ring per poller, set up IORING_SETUP_SINGLE_ISSUER |
// DEFER_TASKRUN (Linux 6.1): task work is never run behind our back; it
// waits in the ring until its one submitter calls io_uring_enter with
// GETEVENTS, and the kernel signals an eventfd registered with the ring
// when the first of it arrives. The submitter is the poller goroutine,
// locked to its thread (runtime.LockOSThread, from its first wait to the
// backend's close; the ring is created disabled and enabled there, which
// makes that thread the ring's submitter). Every SQE goes through it:
// add and remove, on any goroutine, queue theirs (pending) and wake it if
// it is parked; the poller submits what is queued with one io_uring_enter
// a loop, which also runs the task work and so reaps a whole batch of
// completions per syscall. Each socket gets one multishot POLL_ADD
// (POLLIN|POLLOUT|POLLRDHUP, edge-triggered as io_uring's poll is unless
// asked for level): a CQE each time the socket's wait queue is woken
// with one of those, so the sock's readable/writable flags work as on
// epoll (poller.go, step 3). When nothing is ready the poller parks on
// the eventfd through Go's netpoller (as the epoll backend parks on its
// epoll fd), so no thread blocks in the kernel; the eventfd is also what
// wake writes (a flag says which kind of wake-up it was).
//
// Rejected. (a) IORING_OP_RECV/ACCEPT (multishot, provided buffers): the
// data would land in buffers the kernel picks, to be copied into Data as
// now, and a recv in flight is a buffer the kernel may still write, to be
// cancelled and waited for on every SetActive(Off), every Recv's timeout
// and every close; the poll keeps the sock's protocol unchanged and costs
// the same read(2) the epoll backend makes. (b) SQPOLL: a kernel thread
// spinning on a 2-core machine. (c) The default task work (what this
// backend did first): see above. (d) Waiting in io_uring_enter on the
// locked thread: a P held in a blocking syscall, what rawsys.go measured
// against.
//
// Invariants.
//
//  U1. User data names (slot, gen) of a registration, as epoll's (fd, gen):
//      slot in the low 32 bits, gen in the high ones; gen 0 is a sentinel,
//      never a registration: udCancel (an ASYNC_CANCEL's own completion).
//      A CQE is resolved by the poller's generation check, never by a
//      pointer, so a completion for a closed registration whose fd number
//      names another socket by now is a lookup miss (backend.go,
//      invariant 1).
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
//  U3. A short submit is a loud failure. io_uring_enter must report every
//      SQE handed to it consumed (SUBMIT_ALL: an SQE that fails fails in
//      its own CQE); anything else (an errno, fewer) retracts the SQEs not
//      consumed (the tail is ours until the kernel reads it) and is an
//      error that names them, which the poller turns into a crash with a
//      diagnostic: a registration that would never get an event, or an fd
//      that could never be closed safely, instead of a lost wake-up.
//  U4. A multishot poll that ends by itself (its last CQE while not
//      cancelling: the CQ ring overflowed, say) is queued again under
//      the same user data, and its CQE's events are reported, so no edge
//      is lost; a re-armed poll reports the socket's state at once.
//  U5. Only the poller goroutine, on its locked thread, touches the SQ
//      ring and calls io_uring_enter (SINGLE_ISSUER requires it; another
//      thread's enter fails with EEXIST). sqMu guards pending and parked,
//      the hand-off from add and remove: a queue that finds the poller
//      parked wakes it; one that finds it running is submitted before it
//      parks, which it does only after it has taken pending under sqMu
//      and found it empty. regs and inflight are guarded by mu, taken
//      after poller.mu and before sqMu, so a re-arm and a cancel of one
//      registration are ordered: either the cancel finds the re-armed
//      poll, or it finds none and the old poll's last CQE, reaped later,
//      sees cancelling (U2).
//  U6. No lost wake-up at the park. The kernel signals the eventfd when
//      task work arrives in an empty list and when CQEs are posted, except
//      while IORING_CQ_EVENTFD_DISABLED is set, which the poller sets while
//      it runs (its own enters post CQEs: each would signal it). Before it
//      parks it clears the flag and then looks at IORING_SQ_TASKRUN (set
//      when task work arrives in an empty list, cleared when the work is
//      run) and the CQ ring: work that came while the flag was set is
//      seen there, work that comes after signals the eventfd. Both sides
//      are a store then a load with full barriers between (Go's atomics;
//      the kernel's cmpxchg and atomic_or), so one sees the other's.
//
// Lock order: poller.mu -> uringBackend.mu -> uringBackend.sqMu.

package netio

import (
	"errors"
	"fmt"
	"os"
	"runtime"
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

	iouringSetupCQSize       = 1 << 3
	iouringSetupClamp        = 1 << 4
	iouringSetupRDisabled    = 1 << 6
	iouringSetupSubmitAll    = 1 << 7
	iouringSetupTaskrunFlag  = 1 << 9
	iouringSetupSingleIssuer = 1 << 12
	iouringSetupDeferTaskrun = 1 << 13

	iouringEnterGetEvents = 1 << 0

	iouringRegisterEventfd     = 4
	iouringRegisterEnableRings = 12

	iouringOpPollAdd     = 6
	iouringOpAsyncCancel = 14

	iouringPollAddMulti = 1 << 0 // sqe.len of a POLL_ADD

	iouringCQEFMore = 1 << 1

	iouringSQCQOverflow = 1 << 1 // sq ring flags
	iouringSQTaskrun    = 1 << 2

	iouringCQEventfdDisabled = 1 << 0 // cq ring flags

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
const udCancel uint64 = 1

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
	evfd int // registered with the ring, and the wake-up; written under poller.mu (wake)

	sqRing, cqRing, sqeMem []byte // the mmapped rings
	sqHead, sqTail, sqMask *uint32
	sqFlags, sqArray       *uint32
	sqes                   *[uringSQEntries * 4]iouringSQE // indexed by mask; sized for the clamp
	sqEntries              uint32
	cqHead, cqTail, cqMask *uint32
	cqFlags                *uint32
	cqes                   unsafe.Pointer // [cqEntries]iouringCQE

	mu       sync.Mutex // guards regs, inflight (U5)
	regs     map[uint64]*uringReg
	inflight int // registrations cancelled whose last CQE has not come

	sqMu    sync.Mutex   // guards pending, parked (U5)
	pending []iouringSQE // queued by add, remove and re-arms, for the poller to submit
	parked  bool         // the poller waits on the eventfd: a queue must wake it

	// woken: wake was called since the poller last reported a wake-up
	// (the eventfd does not say who signalled it: the kernel or wake).
	woken atomic.Bool

	// Owned by the poller goroutine.
	started  bool         // locked to its thread, the ring enabled
	submit   []iouringSQE // pending, taken (swapped with it)
	evf      *os.File     // evfd, registered with Go's netpoller
	evraw    syscall.RawConn
	deadline time.Time
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
			iouringSetupTaskrunFlag | iouringSetupSingleIssuer | iouringSetupDeferTaskrun,
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
			if b.evf != nil {
				b.evf.Close()
			} else if b.evfd >= 0 {
				unix.Close(b.evfd)
			}
			unix.Close(b.fd)
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
	b.cqFlags = u32(b.cqRing, cq.flags)
	b.cqes = unsafe.Pointer(&b.cqRing[cq.cqes])

	if b.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	// Registered while the ring is disabled (it has no submitter yet, so
	// any thread may).
	evfd := int32(b.evfd)
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(b.fd), iouringRegisterEventfd, uintptr(unsafe.Pointer(&evfd)), 1, 0, 0); e != 0 {
		return nil, fmt.Errorf("io_uring_register eventfd: %w", e)
	}
	fd := b.evfd
	b.evfd = -1 // pollableFile owns it now, and closes it on error
	if b.evf, b.evraw, err = pollableFile(fd, "io_uring eventfd"); err != nil {
		b.evf = nil
		return nil, err
	}
	b.evfd = fd
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
	// Set while the poller runs (U6): the wait clears it before it parks.
	atomic.StoreUint32(b.cqFlags, atomic.LoadUint32(b.cqFlags)|iouringCQEventfdDisabled)
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

// queue hands sqe to the poller goroutine, the one submitter (U5), and
// wakes it if it is parked. Any goroutine; takes sqMu (poller.mu held,
// which wake needs, on every path but the poller's own re-arms).
func (b *uringBackend) queue(sqe iouringSQE) {
	b.sqMu.Lock()
	b.pending = append(b.pending, sqe)
	wake := b.parked
	b.parked = false // one wake-up is enough
	b.sqMu.Unlock()
	if wake {
		b.signal()
	}
}

// flush submits what is queued, with one io_uring_enter per SQ ring's
// worth, GETEVENTS so that the kernel also runs the deferred task work
// (the completions of the polls); with nothing queued it enters only if
// the kernel says task work waits (IORING_SQ_TASKRUN) or force is set. A
// short submit is an error (U3). On the poller goroutine.
func (b *uringBackend) flush(force bool) error {
	b.sqMu.Lock()
	b.pending, b.submit = b.submit[:0], b.pending
	b.sqMu.Unlock()
	q := b.submit
	defer clear(q) // let the SQEs' values go
	entered := false
	for len(q) > 0 || (!entered && (force || atomic.LoadUint32(b.sqFlags)&iouringSQTaskrun != 0)) {
		tail := *b.sqTail // ours: the poller is the only submitter
		head := atomic.LoadUint32(b.sqHead)
		k := min(uint32(len(q)), b.sqEntries-(tail-head))
		for i := uint32(0); i < k; i++ {
			idx := (tail + i) & *b.sqMask
			b.sqes[idx] = q[i]
			*(*uint32)(unsafe.Add(unsafe.Pointer(b.sqArray), 4*uintptr(idx))) = idx
		}
		atomic.StoreUint32(b.sqTail, tail+k) // publishes the SQEs to the kernel's enter
		if err := b.enter(k, tail); err != nil {
			return err
		}
		q = q[k:]
		entered = true
	}
	return nil
}

// enter submits the k SQEs from tail on and runs the deferred task work.
// Neither sleeps (no min_complete): a raw call, as rawsys.go's.
func (b *uringBackend) enter(k, tail uint32) error {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(b.fd), uintptr(k), 0, iouringEnterGetEvents, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e == 0 && uint32(n) == k {
			return nil
		}
		// Short: the kernel did not take them all. Take back those it did
		// not (it reads the tail only inside enter), so that no later
		// enter submits them behind the poller's back, and say which.
		if e != 0 {
			n = 0
		}
		atomic.StoreUint32(b.sqTail, tail+uint32(n))
		var err error = e
		if e == 0 {
			err = errors.New("no error")
		}
		first := b.sqes[(tail+uint32(n))&*b.sqMask]
		return fmt.Errorf("netio: io_uring_enter submitted %d of %d SQEs (the first refused: op %d, user data %#x): %w", n, k, first.opcode, first.userData, err)
	}
}

// signal writes the eventfd: the poller's wait returns.
func (b *uringBackend) signal() {
	var one = [8]byte{1}
	_, _ = rawWrite(b.evfd, one[:]) // EAGAIN only if the counter is saturated: a wake is pending anyway
}

func (b *uringBackend) kind() Backend { return Uring }

// add arms a multishot poll for s (U1). poller.mu held.
func (b *uringBackend) add(s *sock) error {
	ud := uringUD(s.fd, s.gen)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.regs[ud] = &uringReg{ep: s.ep, fd: s.fd}
	b.queue(pollSQE(s.fd, ud)) // a refused submit crashes the poller, loudly (U3)
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
	b.queue(iouringSQE{opcode: iouringOpAsyncCancel, fd: -1, addr: ud, userData: udCancel})
	return nil
}

// busy: cancelled registrations whose last CQE has not come (U2).
func (b *uringBackend) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight > 0
}

// wake makes the poller's wait return with a wake-up (poller.mu held:
// close closes evfd under it).
func (b *uringBackend) wake() {
	if !b.woken.Swap(true) {
		b.signal() // else one is on its way, and the flag not yet taken
	}
}

// close tears the ring down at the poller's exit, on the poller goroutine:
// nothing is registered and nothing is in flight, so no fd of a socket is
// left in it.
func (b *uringBackend) close() {
	b.evf.Close() // closes evfd
	b.unmap()
	unix.Close(b.fd)
	if b.started {
		b.started = false
		runtime.UnlockOSThread()
	}
}

// wait submits what is queued, runs the kernel's deferred task work and
// reaps the completions; while there are none, it parks on Go's netpoller
// until the eventfd is signalled or deadline passes (U6).
func (b *uringBackend) wait(evs []ioEvent, deadline time.Time) (int, error) {
	if err := b.start(); err != nil {
		return 0, err
	}
	if !deadline.Equal(b.deadline) {
		if err := b.evf.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		b.deadline = deadline
	}
	force := false // the eventfd said the kernel has something
	for {
		n, err := b.run(evs, force)
		if n > 0 || err != nil {
			return n, err
		}
		if !b.park() {
			force = true
			continue // something came in as the poller was about to park
		}
		var signalled bool
		rerr := b.evraw.Read(func(fd uintptr) bool {
			var cnt [8]byte
			m, _ := rawRead(int(fd), cnt[:]) // resets the counter
			signalled = m == 8
			return signalled
		})
		b.unpark()
		if rerr != nil {
			if errors.Is(rerr, os.ErrDeadlineExceeded) {
				return 0, nil
			}
			return 0, rerr
		}
		force = signalled
	}
}

// run is one turn of the poller's side of the ring: the wake-up if wake
// was called, then whatever the kernel has after a flush (more flushes
// while IORING_SQ_TASKRUN says task work is left: each enter runs a
// bounded amount of it).
func (b *uringBackend) run(evs []ioEvent, force bool) (int, error) {
	n := 0
	if b.woken.Swap(false) { // before the poller takes its lists (poller.go, step 4)
		evs[0] = ioEvent{}
		n = 1
	}
	for i := 0; n < len(evs); i++ {
		if err := b.flush(force && i == 0); err != nil {
			return n, err
		}
		m, err := b.reap(evs[n:])
		n += m
		if err != nil {
			return n, err
		}
		if atomic.LoadUint32(b.sqFlags)&iouringSQTaskrun == 0 {
			b.sqMu.Lock()
			more := len(b.pending) > 0
			b.sqMu.Unlock()
			if !more {
				break
			}
		}
	}
	return n, nil
}

// park says whether the poller may park now (U5, U6): nothing queued, no
// wake-up, and, once the eventfd is armed again (EVENTFD_DISABLED
// cleared), no task work and no CQE that came in meanwhile. If it may
// not, it leaves the eventfd disarmed.
func (b *uringBackend) park() bool {
	b.sqMu.Lock()
	if len(b.pending) > 0 {
		b.sqMu.Unlock()
		return false
	}
	b.parked = true
	b.sqMu.Unlock()
	atomic.StoreUint32(b.cqFlags, atomic.LoadUint32(b.cqFlags)&^iouringCQEventfdDisabled)
	if atomic.LoadUint32(b.sqFlags)&(iouringSQTaskrun|iouringSQCQOverflow) != 0 ||
		atomic.LoadUint32(b.cqTail) != *b.cqHead || b.woken.Load() {
		b.unpark()
		return false
	}
	return true
}

// unpark disarms the eventfd again: the poller runs.
func (b *uringBackend) unpark() {
	b.sqMu.Lock()
	b.parked = false
	b.sqMu.Unlock()
	atomic.StoreUint32(b.cqFlags, atomic.LoadUint32(b.cqFlags)|iouringCQEventfdDisabled)
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
	if cqe.userData == udCancel {
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
	// Ended by itself (U4): arm it again (the poller's next flush), and
	// report what it said.
	b.queue(pollSQE(r.fd, cqe.userData))
	if cqe.res < 0 {
		ev.mask = evIn | evOut // an error ended it: let the sock look
	}
	return ev, true, nil
}

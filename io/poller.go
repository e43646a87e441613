// The poller: one goroutine per System waiting on its backend (epoll,
// io_uring or Go's netpoller: backend.go).
//
// Design note.
//
// Problem. Sockets are owned by actors, and an actor is not a goroutine: it
// cannot sit in a blocking read. Something must wait on thousands of fds at
// once and turn readiness into messages to the right actor. Go's own netpoller
// is reachable only through goroutine-per-connection (a parked goroutine per
// socket, ≥ 2 KiB stack each), which is exactly the cost Colony exists to
// avoid. So each System gets one goroutine of its own (the poller) that runs
// epoll_wait through golang.org/x/sys/unix, and an eventfd to wake it. The
// protocol below is written against the backend interface (backend.go):
// the epoll backend (epoll_linux.go) is described here, io_uring's
// (uring_linux.go) and the portable one's (portable.go) keep the same
// invariants with other mechanisms, each written in its file's note.
//
// The epoll backend calls epoll_wait with a zero timeout only (rawsys.go: a call
// that cannot sleep, made without the scheduler's syscall bracket). When
// nothing is ready it parks on Go's netpoller until the epoll fd itself is
// readable (an epoll fd is pollable: readable while any fd in it has an
// event; wrapped in an os.File it is registered with the runtime's epoll),
// or until the earliest linger deadline (the os.File's read deadline). So
// no thread and no P is held in a blocking epoll_wait: a P left in a long
// syscall is what made the runtime's sysmon hand Ps between threads and
// tick every 20 µs (docs/benchmarks.md, TCP echo).
//
// Rejected. (a) Level-triggered registration with EPOLL_CTL_MOD to re-arm on
// every SetActive (EPOLLONESHOT): one extra syscall per message, and a re-arm
// that races a close can resurrect a dead registration. (b) A goroutine per
// socket on net.Conn: the memory we are trying not to spend (the portable
// backend does it, where nothing better is at hand). (c) Putting the
// *sock pointer in epoll user data: a stale event for a closed sock would
// then dereference freed state — the hazard the Ruby M:N and writeonce seeds
// guard against with tags and sentinels.
//
// Protocol.
//
//  1. Registration. A socket is added once, EPOLLIN|EPOLLOUT|EPOLLRDHUP|
//     EPOLLET, with user data (fd, gen): gen is a process-wide registration
//     counter (genSeq), bumped for every registration, never 0 (0 tags the eventfd).
//     The table maps fd -> *sock (fdTable). It is written under poller.mu;
//     the poller's lookups read it without the lock. The entry is stored
//     before EPOLL_CTL_ADD, so no event for a registration can be returned
//     by epoll_wait before its entry is visible.
//  2. Events. For each event the poller looks the fd up (lock-free) and drops
//     the event unless the entry's gen equals the event's gen ("the
//     generation check"). Closing a socket deletes the entry, EPOLL_CTL_DELs
//     and closes the fd all under mu, so a reused fd number can only be
//     registered after the old entry is gone, with a larger gen: an event
//     armed for the old registration that was already dequeued by epoll_wait
//     resolves to a lookup miss or a gen mismatch, never to the new owner.
//     A lookup that races the close itself may still return the old sock;
//     its state, re-checked under sock.mu, is closed (or lingering), so the
//     event acts on nothing, as below.
//  3. Edge memory. Edge-triggered epoll reports a transition once. The sock
//     keeps readable/writable flags (guarded by sock.mu): set by an event,
//     cleared when a read or write sees EAGAIN, or by a short read (a read
//     that returned less than asked has emptied the receive queue at that
//     instant; any byte that arrives later raises a new edge, because Linux
//     wakes ET waiters on every arrival). Not so once the peer has closed or
//     reset (EPOLLRDHUP/HUP/ERR, remembered in sock.hup): the EOF or error
//     behind the data raises no new edge, so a short read leaves the socket
//     readable and the next read finds it. An owner that re-arms (SetActive)
//     while readable is set "kicks" the sock: it goes on the poller's kick
//     list and the poller reads it on its next loop, so all active delivery
//     happens on the poller goroutine and stays in order.
//  4. Wake-up. kick and stop write the eventfd; writes are coalesced by the
//     kicked flag (one write per batch, reset by the poller before it drains
//     the list — a kick after the reset writes again, so none is lost).
//  5. Lifetime. The poller starts on the first registration and exits when
//     the registration count falls to zero (every socket closed — which
//     happens at Shutdown, since sockets die with their owners). It closes its
//     epoll fd and eventfd on the way out, so an idle System holds no fd and no
//     goroutine. The next registration starts a fresh poller.
//  6. Lingering. A socket closed with output still queued (sock.go's design
//     note, "Closing") stays registered and is handed to the poller
//     (linger: a list under mu, taken on the next wake-up, as kicks are).
//     From then on the poller goroutine alone services it, on its events
//     and kicks, and closes it when its queue is empty and the peer has
//     acknowledged the FIN sent after it (sock.go, finishLingerLocked). Its
//     deadline (now + its linger timeout) goes into a min-heap only the
//     poller goroutine touches, lingers; while that heap is not empty,
//     epoll_wait's timeout is the earliest deadline, and each loop closes
//     (abortively) the lingering sockets whose deadline has passed. With
//     nothing lingering the timeout is -1 and the loop costs what it did.
//     abort (Shutdown's ctx has ended: a System.HelperWithAbort; or Stop)
//     sets aborted and wakes the poller, which then closes every lingering
//     socket abortively; from then on linger refuses, and Close discards at
//     once. A lingering socket is in the table, so the poller does not exit
//     before the last one is closed; Wait and Shutdown count the poller (a
//     Helper), so they wait for the output to go out.
//
// The race that makes it hard: close vs. an event in flight. epoll_wait may
// return an event for fd 7 gen 12 just as an owner closes fd 7 and another
// actor accepts a connection that gets fd 7 gen 13. Step 2's ordering (delete,
// DEL, close under mu; register under mu with a fresh gen) plus the gen check
// make the late event inert. The poller may also hold a *sock across the
// lookup while its owner closes it; every sock operation re-checks
// sock.state under sock.mu, so it acts on nothing for a closed sock, and
// only as step 6 says for a lingering one (never a message to the owner).
// A lingering sock keeps its fd, so its number cannot be reused before the
// poller closes it by the same ordering.
//
// The same race on io_uring has one more party, the kernel's own poll
// request, which holds the file open: uring_linux.go's cancel-and-wait.
// On the portable backend the "fd" is the socket's slot (its fd where the
// OS has small integer fds, else a number from a free list: portable.go).
//
// Lock order: pollersMu -> poller.mu, and sock.mu -> poller.mu; a backend's
// own locks come after poller.mu. The poller goroutine never holds
// poller.mu while taking a sock.mu.

package netio

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
)

const (
	maxEvents = 256
	readChunk = 64 << 10 // bytes read per Data message at most
)

// genSeq issues registration generations. It is process-wide, not per
// poller, so a registration's (fd, gen) stays unique even across a poller's
// exit and restart.
var genSeq atomic.Uint32

// pollersMu guards pollers: the running poller of each System; and chosen
// (backend.go).
var (
	pollersMu sync.Mutex
	pollers   = map[*actor.System]*poller{}
)

type poller struct {
	sys *actor.System
	be  backend // immutable; its methods say which lock they need

	mu     sync.Mutex // guards everything below
	table  fdTable    // fd -> live registration (writes under mu)
	kicks  []*sock    // socks to service on the next loop
	kicked bool       // a wake is outstanding for kicks or lingerIn
	// lingerIn: socks that began to linger, for the poller to take over
	// (step 6). aborted: write out no more; close lingering socks at once.
	lingerIn []lingerer
	aborted  bool
	dead     bool          // exited; look up a fresh poller
	done     chan struct{} // closed when the goroutine has exited

	// Owned by the poller goroutine only.
	buf        []byte
	feed       *actor.Feeder // the input messages it sends (sock.deliverInput)
	lingers    lingerHeap    // socks the poller took over and may still linger (step 6)
	lingerNext time.Time     // the earliest deadline in lingers; zero: none
	lingerCap  int           // prune lingers when it grows to this (takeLinger)
}

// lingerer is a lingering sock and when its linger timeout runs out (zero:
// never). Immutable.
type lingerer struct {
	s   *sock
	end time.Time
}

// lingerHeap is a min-heap of lingerers by deadline (container/heap): an
// expiry pops the socks whose deadline has passed and touches no other
// (a scan of them all at every deadline would be O(N) a sock).
type lingerHeap []lingerer

func (h lingerHeap) Len() int           { return len(h) }
func (h lingerHeap) Less(i, j int) bool { return h[i].end.Before(h[j].end) }
func (h lingerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lingerHeap) Push(x any)        { *h = append(*h, x.(lingerer)) }
func (h *lingerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = lingerer{} // let the sock go
	*h = old[:len(old)-1]
	return x
}

// pollerFor returns sys's poller with p.mu held, starting one if needed.
func pollerFor(sys *actor.System) (*poller, error) {
	pollersMu.Lock()
	defer pollersMu.Unlock()
	if p := pollers[sys]; p != nil {
		p.mu.Lock()
		if !p.dead {
			return p, nil
		}
		p.mu.Unlock() // it exited and has not yet removed itself: replace it
	}
	p, err := startPoller(sys)
	if err != nil {
		return nil, err
	}
	pollers[sys] = p
	return p, nil
}

// startPoller starts a poller for sys on its backend (backendFor) and
// returns it with p.mu held, taken before its goroutine starts: a fresh
// poller that looked at its table before the caller's registration would
// find it empty and exit. pollersMu held.
func startPoller(sys *actor.System) (*poller, error) {
	be, err := newBackend(backendFor(sys))
	if err != nil {
		return nil, err
	}
	p := &poller{
		sys: sys, be: be,
		done: make(chan struct{}),
		buf:  make([]byte, readChunk),
		feed: sys.NewFeeder(),
	}
	// Shutdown waits for it, or aborts it (see loop). Registered before
	// p.mu is taken: a poller started after Shutdown has aborted the
	// helpers (a socket opened as its ctx ran out) has its abort called
	// at once, in HelperWithAbort, and abort takes p.mu
	// (TestPollerStartedAfterAbortedShutdown). It is then born aborted:
	// it refuses registrations, and exits on the wake-up abort sent.
	exited := sys.HelperWithAbort(p.abort)
	p.mu.Lock()
	go p.loop(exited)
	return p, nil
}

// ErrRegistered: an fd was registered with the poller while already
// registered (a caller handed the same descriptor in twice).
var ErrRegistered = errors.New("netio: fd already registered")

// registerLocked adds s (whose fd and ep are set) to the table and to the
// backend. p.mu must be held.
func (p *poller) registerLocked(s *sock) error {
	if p.aborted {
		// Stop or Shutdown is stopping this poller: a socket added now
		// would keep it alive past the stop's snapshot of the table, and
		// Stop would never return.
		return fmt.Errorf("%w: the poller is stopping (netio.Stop or System.Shutdown)", ErrClosed)
	}
	if p.table.get(s.fd) != nil {
		return fmt.Errorf("%w: fd %d", ErrRegistered, s.fd)
	}
	gen := genSeq.Add(1)
	if gen == 0 { // 0 tags the wake-up (wrapped after 2^32 registrations)
		gen = genSeq.Add(1)
	}
	s.gen = gen
	s.p = p
	p.table.put(s.fd, s) // before add: an event can come as soon as add returns
	if err := p.be.add(s); err != nil {
		p.table.del(s.fd)
		return err
	}
	return nil
}

// register adds a fresh socket to sys's poller. On error the socket is
// not closed (the caller owns it still).
func register(sys *actor.System, s *sock) error {
	p, err := pollerFor(sys)
	if err != nil {
		return err
	}
	if fam := familyOf(p.be.kind()); fam != s.ep.family() {
		// The System's backend changed between making the socket and
		// registering it: the poller it was made for exited, and SetBackend
		// chose another before this one started.
		err = fmt.Errorf("%w: a %s socket for a %s poller", ErrBackendInUse, s.ep.family(), p.be.kind())
	} else {
		err = p.registerLocked(s)
	}
	if err != nil && p.table.live == 0 {
		p.wakeLocked() // a fresh poller with nothing to do: let it exit
	}
	p.mu.Unlock()
	return err
}

// unregisterAndClose removes s from the table and the backend and closes
// it, all under p.mu (protocol step 2). Called with s.mu held, once per
// sock.
func (p *poller) unregisterAndClose(s *sock) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.table.get(s.fd) == s {
		p.table.del(s.fd)
	}
	err := p.be.remove(s)
	if p.table.live == 0 {
		p.wakeLocked() // the poller exits when nothing is registered (step 5)
	}
	return err
}

// kick queues s for service by the poller goroutine (protocol step 3).
// Called with s.mu held.
func (p *poller) kick(s *sock) {
	p.mu.Lock()
	if !p.dead {
		p.kicks = append(p.kicks, s)
		if !p.kicked {
			p.kicked = true
			p.wakeLocked()
		}
	}
	p.mu.Unlock()
}

// linger hands s, closed with output queued, to the poller goroutine, which
// writes the output out and then closes s (protocol step 6). It refuses
// (false) once the poller has been aborted: the caller then discards the
// output and closes s itself. Called with s.mu held, by close.
func (p *poller) linger(s *sock) bool {
	var end time.Time
	if s.linger != actor.Infinity {
		end = time.Now().Add(s.linger)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.aborted || p.dead {
		return false
	}
	p.lingerIn = append(p.lingerIn, lingerer{s, end})
	if !p.kicked {
		p.kicked = true
		p.wakeLocked()
	}
	return true
}

// abort makes the poller stop writing out closed sockets' output: it closes
// the lingering sockets abortively on its next loop, and linger refuses
// from then on (step 6). Called by Shutdown when its ctx has ended (the
// poller is a System.HelperWithAbort) and by Stop; harmless once the poller
// has exited.
func (p *poller) abort() {
	p.mu.Lock()
	p.aborted = true
	p.wakeLocked()
	p.mu.Unlock()
}

// wakeLocked wakes the poller goroutine's wait (the eventfd's write on
// epoll). p.mu must be held (the poller closes its backend under mu, so
// the backend cannot be closed under us).
func (p *poller) wakeLocked() {
	if p.dead {
		return
	}
	p.be.wake()
}

// loop is the poller goroutine.
//
// exited tells the System the goroutine is gone (actor.System.Helper), after
// its fds are closed: Shutdown and Wait wait for it.
func (p *poller) loop(exited func()) {
	defer exited()
	defer close(p.done)
	events := make([]ioEvent, maxEvents)
	for {
		// 1. Wait for readiness, a wake-up, or the next linger deadline.
		var deadline time.Time
		if len(p.lingers) > 0 {
			deadline = p.lingerNext
		}
		n, err := p.be.wait(events, deadline)
		if err != nil {
			panic(fmt.Sprintf("netio: %s poller wait: %v (broken invariant: the poller owns its backend)", p.be.kind(), err))
		}
		woken := false
		// 2. Resolve each event to its registration through the generation check.
		for i := 0; i < n; i++ {
			if p.dispatch(&events[i]) {
				woken = true
			}
		}
		// 3. Close the lingering sockets whose linger timeout has run out.
		if len(p.lingers) > 0 && !time.Now().Before(p.lingerNext) {
			p.expireLingers()
		}
		// 4. Service kicks, take over sockets that began to linger, abort
		// if asked to, and decide whether to exit. The backend reset its
		// wake-up when it reported it, before the lists are taken: a
		// later kick wakes it again.
		if !woken {
			continue
		}
		p.mu.Lock()
		kicks, lingerIn, aborted := p.kicks, p.lingerIn, p.aborted
		p.kicks, p.lingerIn = nil, nil
		p.kicked = false
		if p.idleLocked() && len(kicks) == 0 {
			// lingerIn is empty: a lingering sock is in the table.
			p.exitLocked()
			p.mu.Unlock()
			p.forget()
			return
		}
		p.mu.Unlock()
		for _, s := range kicks {
			s.onKick(p.buf)
		}
		for _, l := range lingerIn {
			p.takeLinger(l)
		}
		if aborted {
			p.abortLingers()
		}
		// The kicks may have been for sockets closed since: if nothing is
		// registered and no kick is pending, exit now, for no event will
		// come to wake us (else a re-arm then the last Close would leak the
		// poller and hang Stop).
		p.mu.Lock()
		if p.idleLocked() && len(p.kicks) == 0 && !p.kicked {
			p.exitLocked()
			p.mu.Unlock()
			p.forget()
			return
		}
		p.mu.Unlock()
	}
}

// idleLocked: nothing is registered and the backend has no kernel work in
// flight (step 5). p.mu held.
func (p *poller) idleLocked() bool { return p.table.live == 0 && !p.be.busy() }

// takeLinger takes over a sock that began to linger (step 6): it writes out
// what the kernel takes now (perhaps all of it: then s closes at once) and
// keeps s's deadline, if it has one.
func (p *poller) takeLinger(l lingerer) {
	l.s.mu.Lock()
	if l.s.state == sockLingering {
		l.s.lingerLocked(p.buf)
	}
	lingering := l.s.state == sockLingering
	l.s.mu.Unlock()
	if !lingering || l.end.IsZero() {
		return // closed already, or lingers until written out (or aborted)
	}
	heap.Push(&p.lingers, l)
	// Most lingering socks are written out and closed long before their
	// deadline, and expireLingers forgets them only at their deadline:
	// prune whenever the heap has doubled since, so that a server closing
	// many connections a second does not keep each one's sock for its
	// whole linger timeout (amortised O(1) a sock).
	if len(p.lingers) >= p.lingerCap {
		p.pruneLingers()
		p.lingerCap = max(64, 2*len(p.lingers))
	}
	p.lingerNext = p.lingers[0].end // l is still lingering: not pruned
}

// expireLingers closes, abortively, the lingering socks whose deadline has
// passed, forgets them (and the closed ones whose deadline has passed), and
// finds the next deadline: O(log N) a sock, and no sock whose deadline is
// still to come is touched.
func (p *poller) expireLingers() {
	now := time.Now()
	for len(p.lingers) > 0 && !now.Before(p.lingers[0].end) {
		l := heap.Pop(&p.lingers).(lingerer)
		l.s.mu.Lock()
		if l.s.state == sockLingering {
			_ = l.s.closeFdLocked(true) // out of time: discard, reset
		}
		l.s.mu.Unlock()
	}
	p.lingerNext = time.Time{}
	if len(p.lingers) > 0 {
		p.lingerNext = p.lingers[0].end
	}
}

// pruneLingers forgets the socks in lingers that are closed already.
func (p *poller) pruneLingers() {
	keep := p.lingers[:0]
	for _, l := range p.lingers {
		l.s.mu.Lock()
		lingering := l.s.state == sockLingering
		l.s.mu.Unlock()
		if lingering {
			keep = append(keep, l)
		}
	}
	clear(p.lingers[len(keep):])
	p.lingers = keep
	heap.Init(&p.lingers)
}

// abortLingers closes every lingering sock abortively: the poller was
// aborted (step 6). Those with no deadline are not in lingers: look in the
// table, where every lingering sock is.
func (p *poller) abortLingers() {
	p.mu.Lock()
	socks := p.table.all()
	p.mu.Unlock()
	for _, s := range socks {
		s.mu.Lock()
		if s.state == sockLingering {
			_ = s.closeFdLocked(true)
		}
		s.mu.Unlock()
	}
	clear(p.lingers)
	p.lingers, p.lingerNext = p.lingers[:0], time.Time{}
}

// dispatch resolves one event through the generation check (protocol step 2)
// and handles it. It reports whether the event was the wake-up.
func (p *poller) dispatch(ev *ioEvent) (wake bool) {
	if ev.gen == 0 {
		return true
	}
	if s := p.resolve(ev.slot, ev.gen); s != nil {
		s.onEvent(ev.mask, p.buf)
	}
	return false
}

// resolve returns the live registration of fd if its generation is gen.
// It takes no lock (step 2): s.gen is written before s is stored in the
// table, and never again.
func (p *poller) resolve(fd int32, gen uint32) *sock {
	s := p.table.get(int(fd))
	if s == nil || s.gen != gen {
		return nil // a closed (and perhaps reused) fd: inert by design
	}
	return s
}

// exitLocked retires the poller: nothing is registered. p.mu must be held.
// The caller removes it from pollers after dropping p.mu (lock order).
func (p *poller) exitLocked() {
	p.dead = true
	p.be.close()
}

// forget removes a dead poller from pollers, unless already replaced.
func (p *poller) forget() {
	pollersMu.Lock()
	if pollers[p.sys] == p {
		delete(pollers, p.sys)
	}
	pollersMu.Unlock()
}

// fdTable maps descriptors to their live registrations: a slice indexed by
// fd (descriptors are small and dense), grown by copying. put, del and all
// are called under poller.mu; get takes no lock: it loads the slice and the
// entry atomically, so it sees every put that happened before the event it
// resolves (step 1), and at worst a sock closed since (step 2).
type fdTable struct {
	slots atomic.Pointer[[]atomic.Pointer[sock]]
	live  int // entries set; under poller.mu
}

// get returns fd's entry (nil: none).
func (t *fdTable) get(fd int) *sock {
	sl := t.slots.Load()
	if sl == nil || fd < 0 || fd >= len(*sl) {
		return nil
	}
	return (*sl)[fd].Load()
}

// put sets fd's entry, which must be empty. poller.mu held.
func (t *fdTable) put(fd int, s *sock) {
	sl := t.slots.Load()
	if sl == nil || fd >= len(*sl) {
		n := 64
		if sl != nil {
			n = len(*sl)
		}
		for n <= fd {
			n *= 2
		}
		grown := make([]atomic.Pointer[sock], n)
		if sl != nil {
			for i := range *sl {
				grown[i].Store((*sl)[i].Load())
			}
		}
		t.slots.Store(&grown)
		sl = &grown
	}
	(*sl)[fd].Store(s)
	t.live++
}

// del clears fd's entry, which must be set. poller.mu held.
func (t *fdTable) del(fd int) {
	(*t.slots.Load())[fd].Store(nil)
	t.live--
}

// all returns the entries set. poller.mu held.
func (t *fdTable) all() []*sock {
	var socks []*sock
	if sl := t.slots.Load(); sl != nil {
		for i := range *sl {
			if s := (*sl)[i].Load(); s != nil {
				socks = append(socks, s)
			}
		}
	}
	return socks
}

// Backends: what the poller (poller.go) waits with, and what a socket is.
//
// Design note.
//
// Problem. The poller's protocol (poller.go) and the socket state machine
// (sock.go) are the hard part of this package, and neither needs epoll as
// such: they need (a) readiness events tagged with a registration's
// (slot, generation), delivered to one goroutine, edge style (an event
// when input or room appears, remembered by the sock's flags until a
// read or write finds none), and (b) non-blocking reads, writes and
// accepts on the socket. epoll gives both on Linux; nothing else Go runs
// on has epoll, and io_uring gives (a) another way on the same Linux
// sockets. So the poller is written once against two small interfaces:
//
//   - backend: one per poller. It registers a sock (add), unregisters and
//     closes it (remove), waits for a batch of events (wait, on the poller
//     goroutine only), wakes that wait from any goroutine (wake), and
//     makes the backend's kind of socket (listen, dial).
//   - endpoint: one per sock. The socket operations sock.go and tcp.go
//     make, each one non-blocking: read, write, accept (errAgain when the
//     socket has nothing for them), and the few questions a close asks the
//     kernel (kernelOutput, finWaiting).
//
// Backends (Backend, SetBackend):
//
//   - Epoll (Linux; epoll_linux.go): epoll, edge-triggered, on non-blocking
//     fds, as the package always did. The default on Linux.
//   - Uring (Linux; uring_linux.go): io_uring's multishot POLL_ADD on the
//     same fds as epoll's, user data (slot, generation) or a sentinel,
//     cancel-and-wait before an fd is closed. Falls back to epoll, with a
//     log line, where io_uring_setup fails.
//   - Portable (every GOOS; portable.go): Go's net package, so the runtime's
//     own netpoller (kqueue, IOCP, epoll) does the waiting: a reader
//     goroutine per socket turns input into events, writes go through
//     net.Conn. The default everywhere but Linux. Its differences from the
//     others are listed in portable.go's design note and the package doc.
//
// Invariants every backend keeps (the poller's protocol depends on them):
//
//  1. An event names (slot, gen) of the registration it was armed for; gen
//     0 is the backend's wake-up and never names a sock. The poller
//     resolves it through the table (poller.resolve), so an event for a
//     closed registration, even one whose slot number names another sock
//     by now, is a lookup miss or a generation mismatch: inert.
//  2. A slot number is not handed to a new socket while a registration of
//     it may still produce an event that resolves: remove deletes the table
//     entry (under poller.mu) before the slot can be reused (an fd is closed
//     only after, and uring closes it only once the kernel has finished
//     with it).
//  3. Edge semantics: after an event, another comes only when something new
//     happens (input, room, hangup); the sock's readable/writable flags
//     remember the rest (poller.go, step 3). A spurious event is harmless
//     (a read finds errAgain).
//  4. wait returns at the latest at its deadline, and at once after a wake
//     that came after its previous return (the wake-up event, gen 0).
//  5. busy is true while a removed registration still has kernel work in
//     flight (uring's cancel-and-wait): the poller does not exit then, and
//     its wait reports a wake-up when the last one completes.

package netio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/colonyrt/colony/actor"
)

// Backend names a poller backend (see SetBackend).
type Backend string

// The backends. Which ones a platform has: Backends.
const (
	// Epoll is Linux's epoll, edge-triggered: the default on Linux.
	Epoll Backend = "epoll"
	// Uring is Linux's io_uring (multishot poll), falling back to Epoll
	// with a log line where the kernel refuses io_uring_setup.
	Uring Backend = "uring"
	// Portable is Go's net package (the runtime's netpoller): every GOOS,
	// and the default everywhere but Linux.
	Portable Backend = "portable"
)

// BackendEnv is the environment variable that picks the backend of every
// System that has not called SetBackend: epoll, uring or portable. An
// unknown or unavailable name is reported once on stderr and ignored.
const BackendEnv = "COLONY_IO_BACKEND"

// Errors of SetBackend.
var (
	// ErrNoBackend: a backend this platform does not have, or no such name.
	ErrNoBackend = errors.New("netio: no such IO backend on this platform")
	// ErrBackendInUse: SetBackend on a System whose poller is running with
	// another backend (its sockets are open).
	ErrBackendInUse = errors.New("netio: the System's poller runs another backend")
)

// Backends returns the backends this platform has, the default first.
func Backends() []Backend {
	return append([]Backend(nil), platformBackends...)
}

// SetBackend chooses the backend of sys's sockets: call it after
// actor.Start, before the first Listen or Dial. It holds for the System's
// life (the poller exits when no socket is open and a new one starts with
// the same backend). Errors: ErrNoBackend (not on this platform),
// ErrBackendInUse (sockets are open on another backend; nothing changed).
// The zero Backend restores the default (BackendEnv, else the platform's).
func SetBackend(sys *actor.System, b Backend) error {
	if sys == nil {
		return actor.ErrNilSystem
	}
	if b != "" && !hasBackend(b) {
		return fmt.Errorf("%w: %q (have %v)", ErrNoBackend, b, platformBackends)
	}
	pollersMu.Lock()
	defer pollersMu.Unlock()
	if p := pollers[sys]; p != nil {
		p.mu.Lock()
		running, dead := p.be.kind(), p.dead
		p.mu.Unlock()
		if !dead && running != resolveBackend(b) && !(b == Uring && running == Epoll) {
			return fmt.Errorf("%w: %s, not %s", ErrBackendInUse, running, b)
		}
	}
	key := weak.Make(sys)
	if b == "" {
		delete(chosen, key)
		return nil
	}
	if _, ok := chosen[key]; !ok {
		// The entry goes with the System: no map entry outlives it.
		runtime.AddCleanup(sys, func(k weak.Pointer[actor.System]) {
			pollersMu.Lock()
			delete(chosen, k)
			pollersMu.Unlock()
		}, key)
	}
	chosen[key] = b
	return nil
}

// BackendOf returns the backend of sys's sockets: the running poller's
// (Epoll where Uring fell back), else the one its next poller will use.
func BackendOf(sys *actor.System) Backend {
	pollersMu.Lock()
	defer pollersMu.Unlock()
	if p := pollers[sys]; p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.dead {
			return p.be.kind()
		}
	}
	return resolveBackend(chosen[weak.Make(sys)])
}

// chosen holds SetBackend's choices, under pollersMu; an entry is removed
// when its System is collected (weak keys, runtime.AddCleanup).
var chosen = map[weak.Pointer[actor.System]]Backend{}

// backendFor is the backend a new poller of sys starts with. pollersMu
// held.
func backendFor(sys *actor.System) Backend {
	return resolveBackend(chosen[weak.Make(sys)])
}

// resolveBackend maps the zero Backend to BackendEnv's, else the
// platform's default.
func resolveBackend(b Backend) Backend {
	if b != "" {
		return b
	}
	if e := envBackend(); e != "" {
		return e
	}
	return platformBackends[0]
}

var (
	envOnce sync.Once
	envB    Backend
)

// envBackend is BackendEnv's backend ("" when unset or unusable), read once.
func envBackend() Backend {
	envOnce.Do(func() {
		v := Backend(os.Getenv(BackendEnv))
		switch {
		case v == "":
		case hasBackend(v):
			envB = v
		default:
			fmt.Fprintf(os.Stderr, "netio: %s=%q: not a backend of this platform (have %v); using %s\n",
				BackendEnv, v, platformBackends, platformBackends[0])
		}
	})
	return envB
}

func hasBackend(b Backend) bool {
	for _, h := range platformBackends {
		if h == b {
			return true
		}
	}
	return false
}

// Event mask bits of ioEvent. They are Linux's poll/epoll bits, so the
// epoll and io_uring backends pass the kernel's masks through unchanged
// (checked in epoll_linux.go); the portable backend makes its own.
const (
	evIn    = 0x1
	evOut   = 0x4
	evErr   = 0x8
	evHup   = 0x10
	evRdHup = 0x2000
)

// ioEvent is one readiness event: the registration (slot, gen) it was
// armed for, and what it says (ev* bits). gen 0: the backend's wake-up.
type ioEvent struct {
	slot int32
	gen  uint32
	mask uint32
}

// errAgain: a non-blocking operation found nothing to do (EAGAIN).
var errAgain = errors.New("netio: operation would block")

// backend is one poller's readiness source and socket factory (see the
// design note). Unless said otherwise, methods are called with poller.mu
// held; wait only on the poller goroutine, without poller.mu.
type backend interface {
	kind() Backend
	// add starts events for s (s.fd, s.gen, s.ep set; the table entry
	// stored).
	add(s *sock) error
	// remove stops events for s and closes its endpoint; the table entry
	// is already deleted. abort: the caller set SO_LINGER {on, 0}.
	remove(s *sock) error
	// wait fills evs with the events ready, waiting until at least one is
	// ready, a wake, or deadline (zero: none); 0 events at the deadline.
	wait(evs []ioEvent, deadline time.Time) (int, error)
	// wake makes wait return (an event of gen 0). Any goroutine, p.mu held.
	wake()
	// busy: kernel work on removed registrations is still in flight.
	busy() bool
	// close releases the backend at the poller's exit (nothing registered,
	// not busy).
	close()
}

// family is a kind of socket: the epoll and io_uring backends share
// non-blocking fds (famFD), the portable one has net.Conns (famNet).
type family uint8

const (
	famFD family = iota + 1
	famNet
)

func (f family) String() string {
	if f == famFD {
		return "fd"
	}
	return "net"
}

// familyOf is the family of b's sockets.
func familyOf(b Backend) family {
	if b == Portable {
		return famNet
	}
	return famFD
}

// sysFamily is the family of the sockets sys's poller takes: the running
// poller's, or the next one's. A socket is made for it before it is
// registered (register checks again).
func sysFamily(sys *actor.System) family {
	return familyOf(BackendOf(sys))
}

// listenOn and dialTo make a socket of family f: its endpoint and slot.
// dialTo starts a connect; the endpoint becomes writable once it is done
// (connectErr says how).
func listenOn(f family, ap netip.AddrPort) (endpoint, int, error) {
	if f == famNet {
		return netListen(ap)
	}
	return fdListen(ap)
}

func dialTo(f family, ap netip.AddrPort) (endpoint, int, error) {
	if f == famNet {
		return netDial(ap)
	}
	return fdDial(ap)
}

// endpoint is one socket's operations (see the design note). Each is
// called with the sock's mu held (so never two at once on one endpoint)
// and none blocks.
type endpoint interface {
	// read reads into p: n > 0 bytes; 0, nil at end of input; errAgain
	// when nothing is ready; or the connection's error.
	read(p []byte) (int, error)
	// write writes some of p (n > 0, a short write is fine), or returns
	// errAgain when there is no room, or the connection's error.
	write(p []byte) (int, error)
	// accept takes a connection from a listening socket: its endpoint and
	// slot; errAgain when none is waiting.
	accept() (endpoint, int, error)
	// connectErr is the outcome of a dial once the endpoint is writable.
	connectErr() error
	// shutdownWrite sends the FIN after what is written (shutdown(SHUT_WR)).
	shutdownWrite() error
	// setAbort makes the close that follows a reset (SO_LINGER {on, 0}).
	setAbort()
	// kernelOutput: output written is not yet acknowledged by the peer.
	kernelOutput() bool
	// finWaiting: after shutdownWrite, the FIN is not yet acknowledged
	// (or not yet sent), and the close must wait; peerClosed: the peer's
	// FIN or reset has been read (then a FIN that is sent need not wait).
	finWaiting(peerClosed bool) bool
	localAddr() *net.TCPAddr
	remoteAddr() *net.TCPAddr
	// close closes the socket (the backend's remove calls it; so does a
	// failed registration).
	close() error
	// family is the kind of socket (which backends take it).
	family() family
	// String names the endpoint for logs.
	String() string
}

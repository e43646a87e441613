// TCP: Listen, Accept, Dial, Send, Recv, ownership. See sock.go for the
// locking and waiter protocol and poller.go for registration.

package netio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Conn is a TCP connection owned by an actor. A *Conn is a handle: compare
// handles with ==; messages about the connection carry the same pointer. All
// methods are safe for concurrent use; Recv and ControllingProcess are for
// the owner only, Send and SendWait for anyone. The zero Conn is not usable.
type Conn struct{ s *sock }

// Listener is a listening TCP socket owned by an actor.
type Listener struct{ s *sock }

// Listen opens a listening socket on addr ("127.0.0.1:0", "[::1]:8080",
// ":0" for all interfaces) owned by owner. The Listener starts passive:
// accept with Accept, or SetActive to receive Accepted messages. A dead
// owner is actor.ErrNoProc; after Shutdown, actor.ErrStopped (Dial too).
func Listen(sys *actor.System, owner actor.Pid, addr string) (*Listener, error) {
	if sys == nil {
		return nil, actor.ErrNilSystem
	}
	ap, err := parseAddr(addr, false)
	if err != nil {
		return nil, err
	}
	// A dead owner, or a stopped System, fails before a socket (and a
	// poller to register it with) is made for nothing.
	if err := ownerGone(sys, owner); err != nil {
		return nil, err
	}
	ep, slot, err := listenOn(sysFamily(sys), ap)
	if err != nil {
		return nil, err
	}
	s := &sock{sys: sys, ep: ep, fd: slot, lst: true}
	l := &Listener{s}
	s.lis = l
	if err := adopt(s, owner); err != nil {
		return nil, err
	}
	return l, nil
}

// adopt registers a fresh socket and ties it to owner. On failure the
// socket is closed.
func adopt(s *sock, owner actor.Pid) error {
	s.owner = owner
	s.limit = SendQueueLimit
	s.low, s.high = DefaultLowWatermark, DefaultHighWatermark
	s.linger = DefaultLinger
	if err := register(s.sys, s); err != nil {
		if !errors.Is(err, ErrRegistered) { // a registered fd belongs to its registration
			s.ep.close()
		}
		return err
	}
	rel, err := s.sys.Hold(owner, s)
	if err != nil {
		s.closeNoWait() // perhaps on the poller goroutine (acceptActiveLocked)
		return err
	}
	s.mu.Lock()
	if s.state != sockOpen { // the owner died in between and closed it: the hold is gone
		s.mu.Unlock()
		rel()
		return ErrClosed
	}
	s.release = rel
	s.mu.Unlock()
	return nil
}

func newConnSock(sys *actor.System, owner actor.Pid, ep endpoint, slot int) (*Conn, error) {
	s := &sock{sys: sys, ep: ep, fd: slot}
	c := &Conn{s}
	s.conn = c
	if err := adopt(s, owner); err != nil {
		return nil, err
	}
	return c, nil
}

// Addr returns the listening address.
func (l *Listener) Addr() *net.TCPAddr { return l.s.localAddr() }

// Close closes the listener. Idempotent.
func (l *Listener) Close() error { return l.s.close() }

// SetActive sets the listener's mode: with Once, N(k) or On each accepted
// connection arrives as an Accepted message (accept failures as Error).
func (l *Listener) SetActive(a Active) error { return l.s.setActive(a) }

// Owner returns the controlling actor.
func (l *Listener) Owner() actor.Pid { return l.s.ownerPid() }

// ControllingProcess moves the listener to another actor; see Conn's.
func (l *Listener) ControllingProcess(c *actor.Context, to actor.Pid) error {
	return l.s.transfer(c, to)
}

// Accept waits up to timeout for a connection (passive listeners only). The
// new Conn is owned by the caller, passive. Errors: actor.ErrTimeout,
// ErrActive, ErrClosed, actor.ErrNotOwner.
func (l *Listener) Accept(c *actor.Context, timeout time.Duration) (*Conn, error) {
	s := l.s
	deadline, err := deadlineOf(timeout)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := s.passiveOwnerLocked(c); err != nil {
			return nil, err
		}
		ep, slot, err := s.ep.accept()
		switch err {
		case nil:
			return newConnSock(s.sys, s.owner, ep, slot)
		case errAgain:
			s.readable = false
			if err := s.waitLocked(c, false, deadline); err != nil {
				return nil, err
			}
		default:
			return nil, sysErr("accept", err)
		}
	}
}

// acceptActiveLocked accepts for an active listener on the poller.
func (s *sock) acceptActiveLocked() {
	for rounds := 0; s.active.n != 0 && s.readable && rounds < 64; rounds++ {
		ep, slot, err := s.ep.accept()
		switch err {
		case nil:
			cn, err := newConnSock(s.sys, s.owner, ep, slot)
			if err != nil {
				s.deliver(Error{Listener: s.lis, Err: err})
				continue
			}
			s.deliver(Accepted{s.lis, cn})
			s.spendLocked()
		case errAgain:
			s.readable = false
		default:
			// EMFILE and friends: tell the owner and stop accepting; the
			// owner re-arms when it has freed descriptors. readable stays
			// set: the connections are still queued, and no new edge may
			// come for them, so the re-arm must try accept again (clearing
			// it left them unaccepted until another connection arrived).
			s.active = Off
			s.deliver(Error{Listener: s.lis, Err: sysErr("accept", err)})
		}
	}
	if s.active.n != 0 && s.readable {
		s.kickLocked()
	}
}

// Dial connects to addr ("host:port") from inside a handler, waiting up
// to timeout; the caller owns the Conn, passive. The host is an IP
// literal, localhost (127.0.0.1), empty (the same), or a name, looked up
// with Go's resolver (net.DefaultResolver) off the scheduler: the handler
// waits inside the runtime, as Recv does, and other actors run (a host
// that is a malformed IP literal, such as 1.2.3, is ErrBadAddress, not a
// name to look up). A name's addresses are tried in the resolver's order
// until one connects; the timeout covers the lookup and every try.
// timeout 0 tries an IP address
// once without waiting (a name cannot be looked up in no time:
// actor.ErrTimeout); actor.Infinity waits as long as the kernel's connect
// does; a negative timeout is actor.ErrNegativeTimeout. A kill of the
// caller ends the wait at once (the socket is closed). Errors:
// ErrBadAddress, actor.ErrTimeout, a *net.DNSError for a name that does
// not resolve, a wrapped unix.ECONNREFUSED (the last address's error,
// for a name), ...
func Dial(c *actor.Context, addr string, timeout time.Duration) (*Conn, error) {
	return dial(c.System(), c.Self(), c, addr, timeout)
}

// DialFor connects to addr from any goroutine (not a handler: it blocks the
// goroutine) for owner, which must be alive; otherwise as Dial.
func DialFor(sys *actor.System, owner actor.Pid, addr string, timeout time.Duration) (*Conn, error) {
	return dial(sys, owner, nil, addr, timeout)
}

func dial(sys *actor.System, owner actor.Pid, c *actor.Context, addr string, timeout time.Duration) (*Conn, error) {
	if sys == nil {
		return nil, actor.ErrNilSystem
	}
	deadline, err := deadlineOf(timeout)
	if err != nil {
		return nil, err
	}
	aps, err := resolveAddr(c, addr, deadline)
	if err != nil {
		return nil, err
	}
	var cn *Conn
	for _, ap := range aps {
		// Each try connects before the owner's hold is taken: look at the
		// owner first, or a dead one's Dial (an orphaned handler's, or
		// DialFor's) connected to every address left, each connection
		// opened at the peer and closed at once (TestDialStopsAtOwnerDeath).
		if err := ownerGone(sys, owner); err != nil {
			return nil, err
		}
		if cn, err = dialOne(sys, owner, c, ap, deadline); err == nil {
			return cn, nil
		}
		if errors.Is(err, actor.ErrTimeout) || errors.Is(err, ErrClosed) || errors.Is(err, actor.ErrNoProc) || errors.Is(err, actor.ErrStopped) {
			break // the time is up, or the owner is gone: no next address
		}
	}
	return nil, err
}

// ownerGone is nil while owner lives, else the error its hold would fail
// with (actor.ErrNoProc; actor.ErrBadPid for a malformed pid;
// actor.ErrStopped after Shutdown, as for every operation of a stopped
// System: TestListenAfterShutdown): that hold's own answer.
func ownerGone(sys *actor.System, owner actor.Pid) error {
	if sys.Alive(owner) {
		return nil
	}
	rel, err := sys.Hold(owner, noClose{})
	if err != nil {
		return err
	}
	rel() // unreachable for a dead pid (death is for good); harmless
	return nil
}

// noClose is the closer of ownerGone's probing hold: nothing to close.
type noClose struct{}

func (noClose) Close() error { return nil }

// dialOne connects to one address (see dial).
func dialOne(sys *actor.System, owner actor.Pid, c *actor.Context, ap netip.AddrPort, deadline time.Time) (*Conn, error) {
	ep, slot, err := dialTo(sysFamily(sys), ap)
	if err != nil {
		return nil, err
	}
	cn, err := newConnSock(sys, owner, ep, slot)
	if err != nil {
		return nil, err
	}
	s := cn.s
	err = func() error {
		s.mu.Lock()
		defer s.mu.Unlock() // also when a kill unwinds the wait
		for !s.writable && s.state == sockOpen {
			if err := s.waitLocked(c, true, deadline); err != nil {
				return err
			}
		}
		if s.state != sockOpen {
			// The owner exited while connecting (its death closes its
			// sockets). The fd is gone, and its number may be another
			// socket's by now: do not read its SO_ERROR.
			return fmt.Errorf("%w: the owner exited while connecting", ErrClosed)
		}
		if err := s.ep.connectErr(); err != nil {
			return &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
		}
		return nil
	}()
	if err != nil {
		s.close()
		return nil, err
	}
	return cn, nil
}

// Send writes b, queueing (a copy of) whatever the kernel does not take now;
// it never blocks. When queued output has all been written the owner gets
// Drained. Queued output outlives the Conn's Close and its owner's death
// (see Close). Errors: ErrClosed, ErrWriteClosed, ErrBackpressure (the queue
// already holds the limit; nothing was queued), a wrapped EPIPE/ECONNRESET.
// Safe from any goroutine; concurrent Sends do not interleave bytes. Send
// does not look at the watermarks (SendWait's), but what it queues counts
// toward them.
func (cn *Conn) Send(b []byte) error {
	s := cn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state != sockOpen:
		return ErrClosed
	case s.wshut:
		return ErrWriteClosed
	case len(b) == 0:
		return nil
	case len(s.wq) > 0 && s.pending >= s.limit:
		return ErrBackpressure
	}
	return s.writeLocked(b)
}

// writeLocked writes b to the kernel, or queues it behind output already
// queued, and queues (a copy of) what the kernel does not take. s.mu held;
// s open, its write side too.
func (s *sock) writeLocked(b []byte) error {
	if len(s.wq) > 0 {
		s.queueLocked(b)
		return nil
	}
	for len(b) > 0 {
		n, err := s.ep.write(b)
		if n > 0 {
			b = b[n:]
			continue
		}
		switch err {
		case nil:
		case errAgain:
			s.writable = false
			s.queueLocked(b)
			return nil
		default:
			return sysErr("write", err)
		}
	}
	return nil
}

// queueLocked queues a copy of b; above the high watermark the Conn is busy
// (sock.go, "Watermarks"). s.mu held.
func (s *sock) queueLocked(b []byte) {
	s.wq = append(s.wq, append([]byte(nil), b...))
	s.pending += len(b)
	if s.pending > s.high {
		s.busy = true
	}
}

// SendWait is Send with gen_tcp's flow control: while more than the high
// watermark is queued (SetWatermarks; DefaultHighWatermark), it waits,
// up to timeout, for the poller to write the queue down to the low
// watermark; then it writes b as Send does, queueing (a copy of) what the
// kernel does not take. Once it stops waiting it takes b whole (written
// or queued): the queue may go above the high watermark by up to len(b),
// and the next SendWait waits. It is not refused by the SendQueueLimit (the watermarks
// are its bound; Send's ErrBackpressure is for callers that cannot wait).
// An empty b only waits. timeout 0 only looks; actor.Infinity waits
// forever; negative is actor.ErrNegativeTimeout.
//
// All of b or nothing: on actor.ErrTimeout no byte of b was written or
// queued, so the caller may retry, or give up with the stream intact
// (gen_tcp's send that returns {error, timeout} has queued its data all
// the same, and the peer reads it later: observed on OTP 25). The wait ends early with ErrClosed when the Conn is
// closed (Close from any goroutine, its owner's death, Shutdown, Stop),
// with ErrWriteClosed on CloseWrite, and on a broken connection with the
// wrapped error (EPIPE, ECONNRESET) of its own write. With
// SetSendTimeoutClose(true), a timeout also closes the Conn, abortively.
//
// c is the caller's Context: any actor may call it, the owner or not; the
// scheduler role is handed off while it waits, other actors keep running.
// From a plain goroutine (not a handler: it would block its scheduler)
// pass a nil c. Several callers may wait at once: they are all woken at
// the low watermark and each queues its b whole, in the order they take
// the Conn's lock (not necessarily the order they began to wait); bytes
// of concurrent calls never interleave.
func (cn *Conn) SendWait(c *actor.Context, b []byte, timeout time.Duration) error {
	s := cn.s
	deadline, err := deadlineOf(timeout)
	if err != nil {
		return err
	}
	closeIt, err := s.sendWait(c, b, deadline)
	if !closeIt {
		return err
	}
	// SetSendTimeoutClose: the peer did not take output in time. Reset
	// the connection, so that it does not take a cut stream for a whole
	// one (a close that wrote the queue out and ended with FIN would).
	s.mu.Lock()
	rel, cerr := s.closeLocked(true)
	s.mu.Unlock()
	if rel != nil {
		rel()
	}
	if cerr != nil {
		return fmt.Errorf("%w; the Conn is closed (SetSendTimeoutClose): %w", err, cerr)
	}
	return fmt.Errorf("%w; the Conn is closed (SetSendTimeoutClose)", err)
}

// sendWait is SendWait's loop; closeIt: it timed out on a Conn set to
// close then.
func (s *sock) sendWait(c *actor.Context, b []byte, deadline time.Time) (closeIt bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock() // also when a kill unwinds the wait
	for {
		switch {
		case s.state != sockOpen:
			return false, ErrClosed
		case s.wshut:
			return false, ErrWriteClosed
		case !s.busy:
			if len(b) == 0 {
				return false, nil
			}
			return false, s.writeLocked(b)
		}
		if err := s.sendWaitLocked(c, deadline); err != nil {
			timedOut := errors.Is(err, actor.ErrTimeout)
			return timedOut && s.sendTOC && s.state == sockOpen, err
		}
		// Woken: busy ended, or the Conn was closed. Look again (the design
		// note: another caller may have made it busy first).
	}
}

// Pending returns the bytes queued by Send and not yet written. After
// Close (or the owner's death) it is what the close is still writing out.
func (cn *Conn) Pending() int {
	cn.s.mu.Lock()
	defer cn.s.mu.Unlock()
	return cn.s.pending
}

// SetSendQueueLimit sets the bound on queued output (default
// SendQueueLimit): Send refuses with ErrBackpressure once n bytes or more
// are queued. It takes effect at the next Send; output already queued is
// kept, even above a lowered bound. Errors: ErrBadLimit unless n > 0
// (nothing changed), ErrClosed on a closed Conn.
func (cn *Conn) SetSendQueueLimit(n int) error {
	if n <= 0 {
		return fmt.Errorf("%w: %d", ErrBadLimit, n)
	}
	return cn.s.whileOpen(func(s *sock) { s.limit = n })
}

// SetWatermarks sets the watermarks of SendWait (gen_tcp's low_watermark
// and high_watermark; defaults DefaultLowWatermark and
// DefaultHighWatermark): SendWait waits once more than high bytes are
// queued, until the queue is down to low bytes or fewer. It takes effect
// at once: a SendWait blocked now is woken if the queue is already down
// to the new low, and one that would have gone ahead waits if the queue
// is above the new high. Errors: ErrBadWatermarks unless 0 < low <= high,
// ErrClosed on a closed Conn.
func (cn *Conn) SetWatermarks(low, high int) error {
	if low <= 0 || high < low {
		return fmt.Errorf("%w: low %d, high %d", ErrBadWatermarks, low, high)
	}
	return cn.s.whileOpen(func(s *sock) {
		s.low, s.high = low, high
		if s.pending > high {
			s.busy = true
		}
		s.unbusyLocked()
	})
}

// Watermarks returns the Conn's watermarks (SetWatermarks).
func (cn *Conn) Watermarks() (low, high int) {
	cn.s.mu.Lock()
	defer cn.s.mu.Unlock()
	return cn.s.low, cn.s.high
}

// SetSendTimeoutClose makes a SendWait that times out close the Conn
// (gen_tcp's send_timeout_close; off by default): abortively, as
// SetLinger(0) does, since a peer that has not taken output in time
// should not read a cut stream as a whole one. The queue is discarded and
// the connection reset (the peer's read fails with ECONNRESET); the
// SendWait returns an error that is actor.ErrTimeout (errors.Is) and says
// so, and other SendWaits on the Conn return ErrClosed. As with Close, the
// owner is sent no message about it: its next call on the Conn returns
// ErrClosed. On a closed Conn, ErrClosed.
func (cn *Conn) SetSendTimeoutClose(on bool) error {
	return cn.s.whileOpen(func(s *sock) { s.sendTOC = on })
}

// SetLinger sets the linger timeout (default DefaultLinger): how long
// output still queued when the Conn is closed, by Close or by its owner's
// death, may take to be written out. The poller writes it out in the
// background and then closes the connection: the peer reads every byte,
// then EOF. If the timeout runs out first, the rest is discarded and the
// connection reset (the peer's read fails with ECONNRESET, perhaps after
// part of the data). actor.Infinity lingers until the output is written
// (or the System's Shutdown gives up: see Close). 0 is an abortive close,
// as SO_LINGER {on, 0}: Close discards what is queued (ErrUnsent) and
// resets the connection, also with nothing queued (the kernel discards
// what it holds too). A negative d is actor.ErrNegativeTimeout; on a
// closed Conn, ErrClosed.
func (cn *Conn) SetLinger(d time.Duration) error {
	if d < 0 {
		return actor.ErrNegativeTimeout
	}
	return cn.s.whileOpen(func(s *sock) { s.linger = d })
}

// whileOpen runs set with s.mu held if s is open: the Conn setters'
// common part. ErrClosed, and nothing run, on a closed socket.
func (s *sock) whileOpen(set func(*sock)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return ErrClosed
	}
	set(s)
	return nil
}

// SetActive sets the delivery mode (see the package doc). After the owner was
// told Closed, it returns io.EOF.
func (cn *Conn) SetActive(a Active) error { return cn.s.setActive(a) }

// Recv reads from a passive Conn, waiting up to timeout (0 only looks,
// actor.Infinity waits forever). n == 0 returns whatever is available (at
// most 64 KiB); n > 0 waits for exactly n bytes. At end of input it returns
// what it has with io.EOF; on a socket error, a wrapped error; on timeout,
// the partial input with actor.ErrTimeout. Owner only, from its handler;
// other actors keep running while it waits. A negative n, or one past
// MaxRecv, is ErrBadLength and reads nothing.
func (cn *Conn) Recv(c *actor.Context, n int, timeout time.Duration) ([]byte, error) {
	s := cn.s
	if n < 0 || n > MaxRecv {
		// Before the buffer is made: n is allocated up front. Else a
		// negative n would read as 0, and a huge one panic in make or
		// take the memory (TestRecvBadLengthReadsNothing).
		return nil, fmt.Errorf("%w: %d (want 0 <= n <= MaxRecv, %d)", ErrBadLength, n, MaxRecv)
	}
	deadline, err := deadlineOf(timeout)
	if err != nil {
		return nil, err
	}
	want := n
	if n == 0 {
		want = readChunk
	}
	out := make([]byte, want)
	got := 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := s.passiveOwnerLocked(c); err != nil {
			return out[:got], err
		}
		if s.eof {
			return out[:got], s.inputEndLocked()
		}
		k, again := s.readLocked(out[got:])
		if again {
			if err := s.waitLocked(c, false, deadline); err != nil {
				return out[:got], err
			}
			continue
		}
		got += k
		if k > 0 && (n == 0 || got == n) {
			return out[:got], nil
		}
	}
}

// readLocked is one raw read into buf, cut to readChunk (one raw read
// stays short: rawsys.go), with the bookkeeping a passive read shares:
// EAGAIN or a short read ends the edge (poller.go, step 3), and an error
// or a read of 0 ends the input (eof, with sockErr for an error). It
// returns the k bytes read, or again for EAGAIN. s.mu held.
func (s *sock) readLocked(buf []byte) (k int, again bool) {
	buf = buf[:min(len(buf), readChunk)]
	k, err := s.ep.read(buf)
	switch {
	case err == errAgain:
		s.readable = false
		return 0, true
	case err != nil:
		s.eof, s.sockErr = true, err
		return 0, false
	case k == 0:
		s.eof = true
	case k < len(buf) && !s.hup:
		s.readable = false // a short read emptied the queue
	}
	return k, false
}

// inputEndLocked is what a read says once the input has ended: the
// socket's error, or io.EOF. s.mu held.
func (s *sock) inputEndLocked() error {
	if s.sockErr != nil {
		return sysErr("read", s.sockErr)
	}
	return io.EOF
}

// TryRead reads into b what a passive Conn has, without waiting: the
// zero-copy, allocation-free way to read (OTP socket's recv with nowait).
// It returns n > 0 bytes read; or (0, io.EOF) at the end of input, or a
// wrapped socket error; or (0, ErrWouldBlock) when nothing is there yet,
// and then the owner is sent one Readable{Conn} when input or its end
// comes, and calls TryRead again. A read shorter than b means the socket
// is empty for now: the next TryRead says ErrWouldBlock without a system
// call. An empty b reads nothing and returns (0, nil). Owner only, from
// its handler, on a passive Conn (ErrActive otherwise). The bytes are
// the caller's, in its own buffer: a server that reads into a pooled
// buffer and sends from it (Send copies only what the kernel does not
// take at once) handles a round trip with no garbage at all, where an
// active Conn makes a Data and its bytes for each chunk.
func (cn *Conn) TryRead(c *actor.Context, b []byte) (int, error) {
	s := cn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.passiveOwnerLocked(c); err != nil {
		return 0, err
	}
	if len(b) == 0 {
		return 0, nil
	}
	if s.eof {
		return 0, s.inputEndLocked()
	}
	// Emptied (poller.go, step 3), or found empty: an edge comes with new
	// input, and the poller then sends the Readable. Not read again after
	// EAGAIN: with hup set, that read could find nothing again, and again.
	if !s.readable && !s.hup {
		s.notify = true
		return 0, ErrWouldBlock
	}
	k, again := s.readLocked(b)
	switch {
	case again:
		s.notify = true
		return 0, ErrWouldBlock
	case k == 0:
		return 0, s.inputEndLocked()
	}
	return k, nil
}

// CloseWrite half-closes the connection (shutdown(SHUT_WR)) once queued
// output is written; input keeps arriving. A SendWait blocked then
// returns ErrWriteClosed.
func (cn *Conn) CloseWrite() error {
	s := cn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return ErrClosed
	}
	s.wshut = true
	s.wakeSendersLocked() // they find ErrWriteClosed
	if len(s.wq) == 0 {
		if err := s.ep.shutdownWrite(); err != nil {
			return sysErr("shutdown", err)
		}
	}
	return nil
}

// Close closes the connection; the owner's death closes it the same way.
// Idempotent. It does not block, and output still queued is not lost: the
// poller writes it out in the background, within the linger timeout
// (SetLinger), and then closes the fd, so the peer reads every byte and
// then EOF, as with gen_tcp. From Close on, the Conn is closed to its owner:
// its calls fail with ErrClosed (the addresses are nil, and Pending says
// what is still to be written out) and no message about it is sent,
// Drained included; input that arrives while the output is written
// out is read and dropped (see the package doc, "Closing"). Close
// returns ErrUnsent, saying how many bytes, only when it discards queued
// output at once: with SetLinger(0), after Stop, or once System.Shutdown
// has given up waiting for output to be written out.
func (cn *Conn) Close() error { return cn.s.close() }

// ControllingProcess makes to the owner (gen_tcp:controlling_process). Only
// the current owner may call it (actor.ErrNotOwner otherwise); to must be
// alive (actor.ErrNoProc), and so must the caller: once a kill has taken
// the caller's sockets to close them, the transfer fails (actor.ErrNoProc)
// rather than hand over a socket about to be closed. Messages already
// delivered stay with the old owner: set the socket passive before
// transferring it.
func (cn *Conn) ControllingProcess(c *actor.Context, to actor.Pid) error {
	return cn.s.transfer(c, to)
}

// Owner returns the controlling actor.
func (cn *Conn) Owner() actor.Pid { return cn.s.ownerPid() }

// LocalAddr and RemoteAddr return the connection's addresses (nil after Close).
func (cn *Conn) LocalAddr() *net.TCPAddr { return cn.s.localAddr() }

// RemoteAddr returns the peer's address.
func (cn *Conn) RemoteAddr() *net.TCPAddr {
	s := cn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return nil
	}
	return s.ep.remoteAddr()
}

// String names the connection for logs.
func (cn *Conn) String() string { return fmt.Sprintf("netio.Conn(fd %d gen %d)", cn.s.fd, cn.s.gen) }

func (s *sock) ownerPid() actor.Pid {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner
}

func (s *sock) transfer(c *actor.Context, to actor.Pid) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return ErrClosed
	}
	if c.Self() != s.owner {
		return actor.ErrNotOwner
	}
	if to == s.owner {
		return nil
	}
	rel, err := s.sys.Transfer(s.release, to, s)
	if err != nil {
		return err
	}
	s.owner, s.release = to, rel
	s.notify = false // the old owner's TryRead: the new one asks for itself
	return nil
}

// passiveOwnerLocked checks that c's actor may block on s.
func (s *sock) passiveOwnerLocked(c *actor.Context) error {
	switch {
	case s.state != sockOpen:
		return ErrClosed
	case c.Self() != s.owner:
		return actor.ErrNotOwner
	case s.active.n != 0:
		return ErrActive
	}
	return nil
}

// waitLocked waits for readiness (write: writability) with s.mu held on
// entry and exit, dropping it while waiting: the owner's wait, in s.w (see
// the design note in sock.go). c nil: a plain goroutine.
func (s *sock) waitLocked(c *actor.Context, write bool, deadline time.Time) error {
	w, timeout, err := newWaiter(c, deadline)
	if err != nil {
		return err
	}
	w.write = write
	s.w = w
	return s.parkLocked(c, w, timeout)
}

// sendWaitLocked waits, as waitLocked does, for the end of busy: a
// SendWait's wait, in s.sw (sock.go, "Watermarks"). s.mu held; s busy.
func (s *sock) sendWaitLocked(c *actor.Context, deadline time.Time) error {
	w, timeout, err := newWaiter(c, deadline)
	if err != nil {
		return err
	}
	s.sw = append(s.sw, w)
	return s.parkLocked(c, w, timeout)
}

// newWaiter makes a waiter for c (nil: a plain goroutine) and returns the
// time left until deadline (zero: actor.Infinity); actor.ErrTimeout once
// it has passed.
func newWaiter(c *actor.Context, deadline time.Time) (*waiter, time.Duration, error) {
	timeout := actor.Infinity
	if !deadline.IsZero() {
		timeout = time.Until(deadline)
		if timeout <= 0 {
			return nil, 0, actor.ErrTimeout
		}
	}
	w := &waiter{tok: tokens.Add(1)}
	if c == nil {
		w.ch = make(chan struct{})
	} else {
		w.sys, w.pid = c.System(), c.Self()
	}
	return w, timeout, nil
}

// testHookWaitFailed, if set (tests only), runs when a wait has timed out
// or failed and is about to take s.mu back. Atomic: a test may set or clear
// it while another test's wait fails.
var testHookWaitFailed atomic.Pointer[func(*sock)]

// parkLocked waits until w fires or timeout passes, with s.mu held on
// entry and exit, dropping it while waiting. w is registered (s.w or s.sw).
func (s *sock) parkLocked(c *actor.Context, w *waiter, timeout time.Duration) error {
	s.mu.Unlock()
	// The caller holds s.mu on entry and exit, and unlocks it in a defer. A
	// kill unwinds c's Receive by a panic: take s.mu back on that path too,
	// or the caller's deferred unlock finds it unlocked (a fatal error that
	// takes the whole process down).
	relocked := false
	defer func() {
		if !relocked {
			s.mu.Lock()
			if !w.fired {
				s.dropWaiterLocked(w)
			}
		}
	}()
	var err error
	if c == nil {
		var tc <-chan time.Time
		if timeout != actor.Infinity {
			t := time.NewTimer(timeout)
			defer t.Stop()
			tc = t.C
		}
		select {
		case <-w.ch:
		case <-tc:
			err = actor.ErrTimeout
		}
	} else {
		// A selective receive for this waiter's token, timed on the
		// runtime's wheel. An ioReady sent after the timeout is removed
		// below.
		if _, rerr := c.Receive(match0(w.tok), timeout); rerr != nil {
			err = rerr
		}
	}
	if err != nil {
		if f := testHookWaitFailed.Load(); f != nil {
			(*f)(s)
		}
	}
	s.mu.Lock()
	relocked = true
	if err != nil {
		if !w.fired {
			s.dropWaiterLocked(w) // never fired
		} else if c != nil {
			// Fired late: the ioReady was delivered under s.mu before we
			// took it back, so it is in our mailbox; remove it. A message
			// another sender began to push ahead of it and has not linked
			// yet may hide it from us (the mailbox lane's design note): a
			// zero-timeout receive that looked once would miss it, and it
			// would reach the handler later. A zero-timeout receive waits
			// such pushes out (Lane.Settle), but it would do so holding
			// s.mu, which the poller takes to service
			// the socket. So wait for it without s.mu: that sender's link
			// and wake-up end the wait, and a kill unwinds it (the
			// deferred relock then runs).
			s.mu.Unlock()
			relocked = false
			c.Receive(match0(w.tok), actor.Infinity)
			s.mu.Lock()
			relocked = true
		}
		return err
	}
	return nil
}

func match0(tok uint64) func(any) bool {
	return func(m any) bool { r, ok := m.(ioReady); return ok && r.tok == tok }
}

func deadlineOf(timeout time.Duration) (time.Time, error) {
	switch {
	case timeout < 0:
		return time.Time{}, actor.ErrNegativeTimeout
	case timeout == actor.Infinity:
		return time.Time{}, nil
	case timeout == 0:
		return time.Now(), nil
	}
	return time.Now().Add(timeout), nil
}

// lookupNetIP looks a host name up; tests replace it (export_test.go).
var lookupNetIP = net.DefaultResolver.LookupNetIP

// resolveAddr parses a Dial address: an IP literal, localhost or an empty
// host as parseAddr does, or a name, looked up (lookup) before deadline.
func resolveAddr(c *actor.Context, addr string, deadline time.Time) ([]netip.AddrPort, error) {
	host, port, err := splitAddr(addr, true)
	if err != nil {
		return nil, err
	}
	if ip, ok := literalHost(host, true); ok {
		return []netip.AddrPort{netip.AddrPortFrom(ip, port)}, nil
	}
	if notAName(host) {
		// A malformed IP literal: looked up, it was a query to the
		// resolver (and the C library's reads "1.2.3" as 1.2.0.3).
		return nil, fmt.Errorf("%w %q: host is neither an IP literal nor a name", ErrBadAddress, addr)
	}
	ips, err := lookup(c, host, deadline)
	if err != nil {
		return nil, err
	}
	aps := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		aps = append(aps, netip.AddrPortFrom(ip.Unmap(), port))
	}
	if len(aps) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return aps, nil
}

// notAName reports whether host, not an IP literal, is no host name
// either: one with a colon (an IPv6 literal gone wrong), or whose last
// label is all digits (an IPv4 one gone wrong: "1.2.3", "1.2.3.4.5"; a
// top-level domain is never numeric, RFC 3696 section 2).
func notAName(host string) bool {
	if strings.Contains(host, ":") {
		return true
	}
	last := strings.TrimSuffix(host, ".")
	last = last[strings.LastIndexByte(last, '.')+1:]
	if last == "" {
		return false // the resolver says what is wrong with it
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// lookup resolves host before deadline (zero: none). In a handler (c not
// nil) it runs in Context.Blocking: on a goroutine of its own while the
// handler waits inside the runtime. The deadline is the lookup's context's
// and Blocking's timeout, so a resolver that overruns it is not waited for;
// a kill unwinds the wait and cancels the lookup, whose result is then
// dropped (Blocking's reply cell: nothing reaches the mailbox).
func lookup(c *actor.Context, host string, deadline time.Time) ([]netip.Addr, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if !deadline.IsZero() {
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w: no time to look up %q", actor.ErrTimeout, host)
		}
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	look := lookupNetIP
	var ips []netip.Addr
	var err error
	if c == nil {
		// A plain goroutine: wait for the lookup or the deadline, whichever
		// comes first (a resolver deaf to its context is not waited for;
		// the buffered channel lets it finish later).
		type result struct {
			ips []netip.Addr
			err error
		}
		ch := make(chan result, 1)
		go func() {
			ips, err := look(ctx, "ip", host)
			ch <- result{ips, err}
		}()
		select {
		case r := <-ch:
			ips, err = r.ips, r.err
		case <-ctx.Done():
			err = ctx.Err()
		}
	} else {
		// Blocking's own timeout too: a resolver that overruns its
		// context's deadline does not hold the dial past it.
		wait := actor.Infinity
		if !deadline.IsZero() {
			wait = max(time.Until(deadline), 0)
		}
		var v any
		v, err = c.Blocking(func() (any, error) { return look(ctx, "ip", host) }, wait)
		ips, _ = v.([]netip.Addr)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("%w: looking up %q: %v", actor.ErrTimeout, host, err)
		}
		return nil, err
	}
	return ips, nil
}

// parseAddr parses host:port with an IP literal or localhost. dial: an empty
// host means loopback; listen: all interfaces.
func parseAddr(addr string, dial bool) (netip.AddrPort, error) {
	host, port, err := splitAddr(addr, dial)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ip, ok := literalHost(host, dial)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%w %q: host must be an IP literal or localhost", ErrBadAddress, addr)
	}
	return netip.AddrPortFrom(ip, port), nil
}

// splitAddr splits host:port and checks the port (dial: not 0).
func splitAddr(addr string, dial bool) (host string, port uint16, err error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%w %q: %v", ErrBadAddress, addr, err)
	}
	pn, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || (dial && pn == 0) {
		return "", 0, fmt.Errorf("%w %q: bad port %q", ErrBadAddress, addr, ps)
	}
	return host, uint16(pn), nil
}

// literalHost is the address a host that needs no lookup stands for: an
// IP literal, localhost, or empty (dial: loopback; listen: all
// interfaces); ok is false for anything else.
func literalHost(host string, dial bool) (ip netip.Addr, ok bool) {
	switch host {
	case "":
		if dial {
			return netip.AddrFrom4([4]byte{127, 0, 0, 1}), true
		}
		return netip.IPv4Unspecified(), true
	case "localhost":
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), true
	}
	ip, err := netip.ParseAddr(host)
	return ip.Unmap(), err == nil
}

// localAddr is the socket's own address, nil once closed: the fd is closed
// under s.mu, and its number may since name another socket.
func (s *sock) localAddr() *net.TCPAddr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return nil
	}
	return s.ep.localAddr()
}

// Stop closes every socket of sys and waits for its poller goroutine to
// exit, while the System runs on (the sockets' owners are not stopped). It
// does not wait for output to be written out: what is queued on any socket,
// or still being written out after a Close, is discarded and the
// connection reset, as Close does after SetLinger(0) (ErrUnsent). For a
// stop that lets queued output go out, close the sockets (or stop their
// owners) and wait: System.Wait, or System.Shutdown, which gives it what is
// left of its ctx and then aborts it as Stop does. Shutdown needs no Stop:
// it closes every socket (sockets die with their owners) and waits for the
// poller goroutine and its two fds (epoll, eventfd) to be gone (the poller
// is a System.Helper).
func Stop(sys *actor.System) {
	pollersMu.Lock()
	p := pollers[sys]
	pollersMu.Unlock()
	if p == nil {
		return
	}
	p.abort() // first: the closes below discard, and the lingering socks are reset
	p.mu.Lock()
	socks := p.table.all()
	p.mu.Unlock()
	for _, s := range socks {
		s.close()
	}
	<-p.done
}

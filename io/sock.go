// Sockets: the per-socket state shared by its owner, its senders and the poller.
//
// Design note.
//
// A sock is touched by three parties: the poller goroutine (events, active
// delivery, flushing queued output), the owner actor (Recv, Accept, SetActive,
// ControllingProcess, Close) and any goroutine that sends (Send). All of its
// mutable state is guarded by sock.mu; nothing is read atomically, so there is
// no ordering argument to make beyond "under mu". Messages to the owner are
// sent while holding mu, which is what keeps Data/Closed/Passive for one
// socket in order even when the owner's kick and the poller's event race
// (System.Deliver never blocks, and no mailbox bound refuses it: see
// deliver).
//
// Blocking waits (Recv, Accept, Dial, SendWait) use a waiter stamped with a
// fresh token (a generation, see DESIGN.md section 3): whoever ends the wait
// (the poller, seeing what the waiter asked for; a close) removes the
// waiter, marks it fired and sends ioReady{tok} to the actor that waits (or
// closes a channel for a plain goroutine), all under mu (fireLocked). The
// actor waits with a selective receive for that token only. A waiter that
// times out takes mu and looks at fired: not fired, it removes itself; fired,
// the ioReady is already in the mailbox (perhaps behind a message another
// sender has not linked yet, so not yet visible) and the actor waits for it
// and removes it, so no internal message ever leaks into a handler.
//
// Two kinds of waiter, two fields. s.w is the owner's readiness wait
// (Recv, Accept: readability; Dial: writability): at most one, since only
// the owner makes these waits and a handler waits in one place at a time
// (Dial's comes before anyone else has the Conn). s.sw holds the SendWait
// waiters: any actor or goroutine may send, as with Send, so any number may
// wait at once, and they wait beside the owner's wait, not instead of it (a
// reader actor blocked in Recv and a writer actor blocked in SendWait on one
// Conn is the usual split; one field for both let the second wait
// overwrite the first, whose caller then slept to its timeout or forever).
//
// Watermarks (SendWait's flow control, gen_tcp's high_watermark and
// low_watermark). busy is a hysteresis flag over pending, guarded by mu:
//
//   - busy is set when pending goes above high (queueLocked, or
//     SetWatermarks lowering high below it), and cleared only when pending
//     comes down to low or below (unbusyLocked: after a flush writes some
//     out, after SetWatermarks). Invariant: pending > high implies busy.
//   - A SendWait waits while busy, and never queues a byte of its b
//     before it stops waiting: from its last look at busy to the queueing
//     it holds mu. So a SendWait queues all of b or nothing.
//   - A waiter is in sw only while busy and the Conn is open with its
//     write side open. Whatever ends one of those (unbusyLocked, close,
//     CloseWrite) fires and removes every waiter in sw, under mu. All of
//     them, as a busy Erlang port resumes every process it suspended: each
//     re-checks under mu and the first to queue may make the Conn busy
//     again, and the rest wait again with what is left of their timeouts.
//     A wake-up is a hint, never a ticket.
//
// Closing: the sock's state (sockState) says who may use it. Open, it is
// its owner's. Close, or the owner's death (Hold), ends that at once: no
// call of the owner's works on it any more and no message about it is
// sent (the owner may be dead, or gone on to other things). But output
// still queued in wq is not thrown away: gen_tcp's port writes its queue
// out before it closes the fd, whether its owner closed it, exited or was
// killed, and a server's last reply depends on that. So a sock closed with
// a queue (or with output still in the kernel, unacknowledged: see
// kernelOutputLocked) and a linger timeout other than 0 goes to the lingering state
// and is handed to the poller (poller.linger), which owns it from then on:
// it writes wq out as the kernel takes it, reads and drops any input (Linux
// resets a connection closed with input unread, discarding what its own
// send buffer still held for the peer), and closes the fd once wq is
// empty and the peer has acknowledged it all, with the FIN sent after it
// (finishLingerLocked), so the peer reads every byte and then EOF. It closes it at once,
// abortively (SO_LINGER {on, 0}: a reset, so the peer does not take a cut
// stream for a whole one), when the linger timeout runs out, when Shutdown
// gives up waiting (HelperWithAbort) or on Stop. The fd stays registered,
// under its generation, until that close: its number cannot be reused
// while it lingers, so the generation check (poller.go, step 2) covers a
// lingering fd as any other.

package netio

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Active is a socket's delivery mode: Off (passive), Once, N(k) or On.
type Active struct{ n int }

// The negative counts of the modes that have no count.
const (
	onceN = -1
	onN   = -2
)

var (
	// Off: passive; read with Recv.
	Off = Active{0}
	// Once: deliver the next input as one message, then become passive.
	Once = Active{onceN}
	// On: deliver all input as messages, with no end ({active, true}).
	// There is no flow control: a peer that sends faster than the owner
	// handles fills the owner's mailbox (a MailboxBound does not refuse
	// socket messages), as in OTP; Once and N(k) bound it.
	On = Active{onN}
)

// N delivers k messages and then a Passive message; N(0) is Off.
// A negative k panics. Set on a socket already in N mode, it adds k to the
// messages left, as {active, N} does in OTP.
func N(k int) Active {
	if k < 0 {
		panic("netio: N with a negative count")
	}
	return Active{k}
}

// String formats the mode as Erlang writes it.
func (a Active) String() string {
	switch {
	case a.n == 0:
		return "false"
	case a.n == onceN:
		return "once"
	case a.n == onN:
		return "true"
	}
	return fmt.Sprint(a.n)
}

// Errors.
var (
	// ErrClosed: the socket was closed by this side (Close, or its owner died).
	ErrClosed = errors.New("netio: socket closed")
	// ErrBackpressure: Send found SendQueueLimit bytes already queued; nothing
	// was queued. Wait for Drained and send again.
	ErrBackpressure = errors.New("netio: send queue full")
	// ErrActive: a blocking Recv or Accept, or a TryRead, on a socket in
	// active mode.
	ErrActive = errors.New("netio: socket is in active mode")
	// ErrWouldBlock: TryRead found no input; a Readable message will say
	// when there is some.
	ErrWouldBlock = errors.New("netio: no input yet (a Readable will follow)")
	// ErrUnsent: Close discarded queued output that had not been written
	// (a linger timeout of 0, or the poller no longer writing closed
	// sockets' output out: Stop, or Shutdown past its ctx); the error says
	// how many bytes.
	ErrUnsent = errors.New("netio: closed with unsent output")
	// ErrBadAddress: an address that does not parse as host:port with a
	// port and, for Listen, an IP literal (or "localhost") as the host;
	// Dial also takes a name, and looks it up.
	ErrBadAddress = errors.New("netio: bad address")
	// ErrWriteClosed: Send after CloseWrite.
	ErrWriteClosed = errors.New("netio: write side closed")
	// ErrBadWatermarks: SetWatermarks given watermarks that are not
	// 0 < low <= high; nothing was changed.
	ErrBadWatermarks = errors.New("netio: bad watermarks (want 0 < low <= high)")
	// ErrBadLimit: SetSendQueueLimit given a bound that is not positive;
	// nothing was changed.
	ErrBadLimit = errors.New("netio: bad send queue limit (want > 0)")
	// ErrBadLength: Recv given a negative length, or one past MaxRecv;
	// nothing was read.
	ErrBadLength = errors.New("netio: bad Recv length")
)

// MaxRecv is the largest length Recv takes (gen_tcp's recv returns
// {error, enomem} past its 64 MiB): Recv allocates the n bytes it waits for
// up front.
const MaxRecv = 64 << 20

// SendQueueLimit is the default bound on a Conn's queued output.
const SendQueueLimit = 16 << 20

// The default watermarks of a Conn's queued output (SetWatermarks): a
// SendWait waits while more than DefaultHighWatermark bytes are queued,
// until the poller has written the queue down to DefaultLowWatermark. The
// queue only grows once the kernel's send buffer is full (Linux autotunes
// it up to megabytes), so these bound what waits in Colony beyond the
// kernel, per Conn. gen_tcp's defaults are 8 KiB and 4 KiB; here they are
// a Data message's size (64 KiB, the poller's read chunk: a SendWait that
// echoes one Data queues at most one chunk above high) and half of it,
// so that a waiting sender is woken once for each 32 KiB the peer takes,
// not for every few KiB (a wake-up costs a message and a scheduler
// hand-off), while 10,000 Conns at their high watermark hold 640 MiB.
const (
	DefaultHighWatermark = 64 << 10
	DefaultLowWatermark  = 32 << 10
)

// DefaultLinger is a Conn's linger timeout unless SetLinger changes it:
// how long output still queued when the Conn is closed (by Close or its
// owner's death) may take to be written out before the rest is discarded
// and the connection reset.
const DefaultLinger = 30 * time.Second

// Messages delivered to the owner.
type (
	// Data is a chunk of input from an active Conn. Bytes is never empty and
	// belongs to the receiver.
	Data struct {
		Conn  *Conn
		Bytes []byte
	}
	// Closed says the peer closed its side (EOF), or the connection broke
	// (after an Error). The socket is still open for writing until Close.
	Closed struct{ Conn *Conn }
	// Error reports a socket error (peer reset, accept failure).
	// Exactly one of Conn and Listener is set.
	Error struct {
		Conn     *Conn
		Listener *Listener
		Err      error
	}
	// Readable says that a passive Conn on which TryRead found nothing has
	// input to read, or its end: TryRead again. One comes for each
	// TryRead that returned ErrWouldBlock, unless the Conn is made active,
	// handed to another owner or closed first. It is a hint: a Recv may
	// have taken the input meanwhile, and TryRead then says ErrWouldBlock
	// again (and another Readable comes).
	Readable struct{ Conn *Conn }
	// Passive says an N(k) budget ran out: the socket is now passive.
	Passive struct {
		Conn     *Conn
		Listener *Listener
	}
	// Drained says the Conn's queued output has all been written.
	Drained struct{ Conn *Conn }
	// Accepted is a connection accepted by an active Listener. Conn is owned
	// by the Listener's owner and passive.
	Accepted struct {
		Listener *Listener
		Conn     *Conn
	}
)

// ioReady wakes a blocked Recv/Accept/Dial/SendWait (see the design note).
type ioReady struct{ tok uint64 }

var tokens atomic.Uint64 // waiter tokens; unique per process

// waiter is one blocked call (see the design note). All but fired are
// immutable after newWaiter.
type waiter struct {
	tok   uint64
	write bool          // s.w only: wants writability (connect), else readability
	ch    chan struct{} // a plain goroutine's wait; nil: an ioReady to pid
	sys   *actor.System // the waiting actor's System (ch nil)
	pid   actor.Pid     // the waiting actor (ch nil)
	// fired: the wait was ended (fireLocked) and the waiter removed from
	// s.w or s.sw. Guarded by the sock's mu; set once.
	fired bool
}

// sockState says who may use a sock (the design note, "Closing"). It is
// guarded by sock.mu and moves only forward: open -> closed, or open ->
// lingering -> closed.
type sockState uint8

const (
	// sockOpen: the owner's. Its calls work and readiness becomes messages
	// to it. Close (any goroutine) or the owner's death moves it on.
	sockOpen sockState = iota
	// sockLingering: closed to the owner (its calls say ErrClosed, nothing
	// is sent to it), fd still open and registered. The poller alone
	// writes wq out and then closes the fd (closeFdLocked).
	sockLingering
	// sockClosed: unregistered, fd closed (its number may name another
	// socket by now). Inert.
	sockClosed
)

// sock is the state of one registered fd. See the design note.
type sock struct {
	sys *actor.System
	p   *poller  // set at registration; immutable after
	ep  endpoint // the socket's operations (backend.go); immutable
	fd  int      // its slot: the fd, on the fd backends; immutable
	gen uint32   // registration generation; immutable after registration
	lst bool     // a listening socket; immutable

	mu       sync.Mutex // guards everything below
	owner    actor.Pid
	release  func() bool // the owner's Hold
	state    sockState
	linger   time.Duration // linger timeout; actor.Infinity: none
	active   Active
	readable bool // protocol step 3 in poller.go
	// notify: a TryRead found nothing and its owner is owed a Readable
	// when input or its end comes (serviceLocked). Cleared when it is
	// sent, and by SetActive to an active mode and by ControllingProcess.
	notify bool
	// hup: the peer closed or reset (EPOLLRDHUP/HUP/ERR seen). Sticky: a
	// short read no longer means "emptied", since the EOF or the error is
	// still to be read and no new edge will announce it.
	hup        bool
	writable   bool
	eof        bool // peer closed (read returned 0) or broke
	wshut      bool // CloseWrite done
	sockErr    error
	wq         [][]byte // queued output, oldest first
	pending    int      // bytes in wq
	limit      int
	low, high  int       // watermarks: 0 < low <= high (SetWatermarks)
	busy       bool      // the design note, "Watermarks"
	sendTOC    bool      // SetSendTimeoutClose: a SendWait's timeout closes abortively
	w          *waiter   // the owner's readiness wait (Recv, Accept, Dial)
	sw         []*waiter // SendWait's waiters, oldest first; fired when busy ends
	kickQueued bool
	closedSent bool // Closed was delivered

	conn *Conn // the public handle (one of conn, lis)
	lis  *Listener

	// fdGone, set by the backend's remove when it closes the fd later
	// (io_uring's cancel-and-wait), is closed once the fd is. Guarded by
	// mu; see close.
	fdGone <-chan struct{}
}

func (s *sock) Close() error { return s.close() }

// close is Close: idempotent; releases the owner's hold. Queued output, or
// output the kernel still holds for the peer, is handed to the poller to
// write out (the design note, "Closing"), unless
// the linger timeout is 0 or the poller is no longer taking any: then it is
// discarded, and the result says so (ErrUnsent). A socket closed at once
// is closed when close returns, on every backend: where the backend
// closes the fd later (io_uring, once its poll is cancelled: fdGone),
// close waits for it, so that a Listen on the port a closed Listener had,
// say, finds it free. Not on the poller goroutine (closeNoWait), which is
// the one that closes the fd.
func (s *sock) close() error {
	s.mu.Lock()
	rel, err := s.closeLocked(false)
	gone := s.fdGone
	s.mu.Unlock()
	if rel != nil {
		rel()
	}
	if gone != nil {
		<-gone // the kernel completes a cancelled poll promptly (uring_linux.go, U2)
	}
	return err
}

// closeNoWait is close for the poller goroutine: the fd may close after
// it returns (close).
func (s *sock) closeNoWait() error {
	s.mu.Lock()
	rel, err := s.closeLocked(false)
	s.mu.Unlock()
	if rel != nil {
		rel()
	}
	return err
}

// closeLocked closes an open sock as close does, or at once and abortively
// (abort: as SetLinger(0) does), and ends every wait on it. s.mu held. It
// returns the owner's hold, for the caller to release once it has dropped
// s.mu, and close's result. A closed sock: nil, nil.
func (s *sock) closeLocked(abort bool) (release func() bool, err error) {
	if s.state != sockOpen {
		return nil, nil
	}
	unsent := s.pending
	if !abort && s.linger != 0 && (unsent > 0 || s.kernelOutputLocked()) && s.p.linger(s) {
		s.state = sockLingering // the poller owns s now; it takes s.mu first
		unsent = 0
	} else {
		err = s.closeFdLocked(abort || s.linger == 0 || unsent > 0)
		if err != nil {
			err = fmt.Errorf("netio: close fd: %w", err)
		}
	}
	// Under s.mu, as serviceLocked does: a waiter that times out takes
	// s.mu and then removes the ioReady of a fired waiter, so the message
	// must be in its mailbox by then (else it would reach the handler
	// later). Deliver never blocks. The waiters see ErrClosed.
	if w := s.w; w != nil {
		s.w = nil
		s.fireLocked(w)
	}
	s.wakeSendersLocked()
	release = s.release
	s.release = nil
	if unsent > 0 {
		err = fmt.Errorf("%w: %d bytes", ErrUnsent, unsent)
	}
	return release, err
}

// fireLocked ends w's wait: w is marked fired and its waiter woken, a
// plain goroutine by closing its channel, an actor by an ioReady with w's
// token. The caller has removed w from s.w or s.sw. s.mu held (the design
// note: a waiter that times out reads fired under s.mu, and a fired one's
// ioReady must be in its mailbox by then). A dead actor's ioReady is
// dropped (its kill ends its wait, and its death closes its sockets).
func (s *sock) fireLocked(w *waiter) {
	w.fired = true
	if w.ch != nil {
		close(w.ch)
		return
	}
	w.sys.Deliver(w.pid, ioReady{w.tok})
}

// dropWaiterLocked removes w, which timed out or was unwound before it
// fired, from s.w or s.sw. s.mu held.
func (s *sock) dropWaiterLocked(w *waiter) {
	if s.w == w {
		s.w = nil
		return
	}
	if i := slices.Index(s.sw, w); i >= 0 {
		s.sw = slices.Delete(s.sw, i, i+1) // clears the vacated slot
	}
}

// wakeSendersLocked fires every SendWait waiter (the design note,
// "Watermarks"). s.mu held.
func (s *sock) wakeSendersLocked() {
	for i, w := range s.sw {
		s.sw[i] = nil
		s.fireLocked(w)
	}
	s.sw = s.sw[:0]
}

// unbusyLocked ends busy once pending is down to the low watermark, and
// wakes SendWait's waiters. Called wherever pending may have fallen, or
// low risen. s.mu held.
func (s *sock) unbusyLocked() {
	if s.busy && s.pending <= s.low {
		s.busy = false
		s.wakeSendersLocked()
	}
}

// kernelOutputLocked says the kernel still holds output of this Conn that
// the peer has not acknowledged (SIOCOUTQ). Such a socket lingers too,
// with an empty queue: closed at once, with input unread or arriving
// later, Linux resets the connection and discards that output, a last
// reply the owner's Send had handed to the kernel whole
// (TestLastReplyWithUnreadInputReachesPeer). s.mu held.
func (s *sock) kernelOutputLocked() bool {
	return !s.lst && s.ep.kernelOutput()
}

// closeFdLocked moves s to sockClosed: drops what is queued, unregisters
// and closes the fd. abort closes it with SO_LINGER {on, 0}: the kernel
// discards what it still holds and resets the connection (what the peer
// sees when output is discarded, and on SetLinger(0) as with the socket
// option). s.mu held; by close while s is open, by the poller once it
// lingers.
func (s *sock) closeFdLocked(abort bool) error {
	s.state = sockClosed
	s.wq, s.pending = nil, 0
	if abort {
		s.ep.setAbort()
	}
	return s.p.unregisterAndClose(s)
}

// lingerLocked is the poller's work on a lingering sock: drop input, write
// the queue out as far as the kernel takes it, and once the queue is empty
// (written, or discarded by a write error: the peer is gone) send the FIN
// and close the fd when the peer has it (finishLingerLocked). s.mu held, on
// the poller goroutine.
func (s *sock) lingerLocked(buf []byte) {
	s.discardInputLocked(buf)
	if s.writable && len(s.wq) > 0 {
		s.flushLocked()
	}
	if len(s.wq) == 0 && s.state == sockLingering {
		s.finishLingerLocked()
	}
}

// finishLingerLocked ends a lingering sock whose queue is in the kernel:
// it sends the FIN after the data (shutdown(SHUT_WR); again, a no-op) and
// closes the fd once the peer has acknowledged it, and so every byte, or
// has closed or reset its side. Not before: input that arrives while the
// kernel still holds output for the peer, before the close or after it
// (an orphaned socket that gets data), makes Linux reset the connection
// and throw that output away, and a peer still sending would get a cut
// stream (TestLingerPeerKeepsSending). The ack of the FIN
// moves the socket from FIN_WAIT1 to FIN_WAIT2, which wakes epoll (an
// event: lingerLocked again); the peer's FIN or RST raises an event too.
// The linger timeout bounds the wait. s.mu held, on the poller goroutine.
func (s *sock) finishLingerLocked() {
	_ = s.ep.shutdownWrite()
	if s.ep.finWaiting(s.eof) {
		return // our FIN is not acknowledged yet, and the peer has not closed its side
	}
	_ = s.closeFdLocked(false) // data, then FIN: all with the peer
}

// discardInputLocked reads and drops the input of a lingering sock: closed
// with input unread, the fd would reset the connection rather than end it
// after the output still in the kernel. A flood gets 16 reads and then a
// kick, as active delivery does. s.mu held, on the poller goroutine.
func (s *sock) discardInputLocked(buf []byte) {
	for rounds := 0; s.readable && !s.eof; rounds++ {
		if rounds == 16 {
			s.kickLocked() // more later, after other sockets
			return
		}
		n, err := s.ep.read(buf)
		switch {
		case err == errAgain:
			s.readable = false
		case err != nil, n == 0:
			s.eof = true // broken or ended: a broken one fails the next write too
			s.readable = false
		case n < len(buf) && !s.hup:
			s.readable = false // a short read emptied the queue (poller.go step 3)
		}
	}
}

// onEvent handles one epoll event for s on the poller goroutine.
func (s *sock) onEvent(events uint32, buf []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == sockClosed {
		return
	}
	if events&(evIn|evRdHup|evHup|evErr) != 0 {
		s.readable = true
	}
	if events&(evRdHup|evHup|evErr) != 0 {
		s.hup = true
	}
	if events&(evOut|evHup|evErr) != 0 {
		s.writable = true
	}
	if s.state == sockLingering {
		s.lingerLocked(buf)
		return
	}
	if s.writable && len(s.wq) > 0 {
		s.flushLocked()
	}
	s.serviceLocked(buf)
}

// onKick services s after its owner re-armed it with input already waiting.
func (s *sock) onKick(buf []byte) {
	s.mu.Lock()
	s.kickQueued = false
	switch s.state {
	case sockOpen:
		s.serviceLocked(buf)
	case sockLingering:
		s.lingerLocked(buf) // a flood of input to drop (discardInputLocked)
	}
	s.mu.Unlock()
}

// serviceLocked does what readiness allows: wake a waiter, deliver input in
// active mode. s.mu held, on the poller goroutine.
func (s *sock) serviceLocked(buf []byte) {
	if w := s.w; w != nil && ((w.write && s.writable) || (!w.write && s.readable)) {
		s.w = nil
		s.fireLocked(w) // a dead owner drops it; its close is on the way
	}
	if s.notify && (s.readable || s.hup) {
		s.notify = false
		s.deliverInput(Readable{s.conn})
	}
	if s.active.n == 0 || !s.readable {
		return
	}
	if s.lst {
		s.acceptActiveLocked()
		return
	}
	for rounds := 0; s.active.n != 0 && s.readable && rounds < 16; rounds++ {
		if s.eof {
			s.readable = false
			return
		}
		n, err := s.ep.read(buf)
		switch {
		case err == errAgain:
			s.readable = false
		case err != nil:
			s.brokenLocked(err)
		case n == 0:
			s.eof = true
			s.readable = false
			s.closedSent = true
			s.active = Off
			s.deliver(Closed{s.conn})
		default:
			if n < len(buf) && !s.hup {
				s.readable = false // a short read emptied the queue (step 3)
			}
			s.deliverInput(Data{s.conn, append([]byte(nil), buf[:n]...)})
			s.spendLocked()
		}
	}
	if s.active.n != 0 && s.readable {
		s.kickLocked() // fairness: more later, after other sockets
	}
}

// spendLocked charges one delivered message against the active budget.
func (s *sock) spendLocked() {
	switch {
	case s.active.n == onceN:
		s.active = Off
	case s.active.n > 0:
		s.active.n--
		if s.active.n == 0 {
			s.deliver(Passive{Conn: s.conn, Listener: s.lis})
		}
	}
}

// brokenLocked records a socket error: Error then Closed to an active owner,
// or kept for the next Recv.
func (s *sock) brokenLocked(err error) {
	s.eof = true
	s.readable = false
	s.sockErr = err
	if s.active.n != 0 {
		s.deliver(Error{Conn: s.conn, Err: sysErr("read", err)})
		s.deliver(Closed{s.conn})
		s.closedSent = true
		s.active = Off
	}
}

// deliver sends m to the owner. s.mu held (keeps per-socket order). It is
// never refused by a bound on the owner's mailbox (System.Deliver): active
// mode is the flow control of socket messages, and a refused Data would be
// lost without the owner ever learning of it.
func (s *sock) deliver(m any) {
	s.sys.Deliver(s.owner, m)
}

// deliverInput is deliver on the poller goroutine, for the messages sent
// for each round trip (Data, Readable): through the poller's Feeder, whose
// mailbox nodes come back to it once the owner has handled them, so input
// makes no garbage beyond the message itself.
func (s *sock) deliverInput(m any) {
	s.p.feed.Deliver(s.owner, m)
}

func (s *sock) kickLocked() {
	if s.kickQueued {
		return
	}
	s.kickQueued = true
	s.p.kick(s)
}

// flushLocked writes queued output until done or EAGAIN. s.mu held. It
// tells an open sock's owner of the outcome (Drained, or Error); a
// lingering sock's owner is told nothing. Down to the low watermark, it
// wakes SendWait's waiters (after the outcome: a write error is theirs
// to find on their own write).
func (s *sock) flushLocked() {
	defer s.unbusyLocked()
	for len(s.wq) > 0 {
		b := s.wq[0]
		n, err := s.ep.write(b)
		if n > 0 {
			s.pending -= n
			if n < len(b) {
				s.wq[0] = b[n:]
				continue
			}
			s.wq[0] = nil
			s.wq = s.wq[1:]
			continue
		}
		switch err {
		case errAgain:
			s.writable = false
			return
		case nil:
			continue
		default:
			// The peer is gone: the queue can never be written. Tell the owner.
			lost := s.pending
			s.wq, s.pending = nil, 0
			if s.state == sockOpen {
				s.deliver(Error{Conn: s.conn, Err: fmt.Errorf("%w (%d queued bytes not sent)", sysErr("write", err), lost)})
			}
			return
		}
	}
	s.wq = nil
	if s.state != sockOpen {
		return // lingering: the caller closes the fd
	}
	if s.wshut {
		_ = s.ep.shutdownWrite()
	}
	s.deliver(Drained{s.conn})
}

// setActive changes the delivery mode; s.mu not held.
func (s *sock) setActive(a Active) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return ErrClosed
	}
	if s.closedSent {
		return io.EOF // input ended and the owner was told
	}
	if a.n > 0 && s.active.n > 0 {
		// {active, N} on a socket already counting adds N to what is left,
		// as inet:setopts does (found by the differential scenario
		// tests/testdata/erlang/tcp/active_n_add); Once and Off replace
		// the count. Clamped rather than wrapped.
		a.n = min(a.n, math.MaxInt-s.active.n) + s.active.n
	}
	s.active = a
	if a.n != 0 {
		s.notify = false // active delivery takes over from TryRead's notice
	}
	if a.n != 0 && (s.readable || (s.eof && !s.lst)) {
		if s.eof {
			s.closedSent = true
			// Input is over: tell the newly active owner at once.
			s.readable = false
			if s.sockErr != nil {
				s.deliver(Error{Conn: s.conn, Err: sysErr("read", s.sockErr)})
			}
			s.deliver(Closed{s.conn})
			s.active = Off
			return nil
		}
		s.kickLocked()
	}
	return nil
}

func sysErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Err: err}
}

// The listener actor, the acceptors, the connection actors and the slots
// that count connections.
//
// Design note.
//
// The problem: netio lets only a socket's owner accept on it (Accept, or
// Accepted messages in active mode), so n acceptors cannot each block in
// accept on one socket as ranch's do. Rejected: one socket per acceptor
// with SO_REUSEPORT (the kernel hashes connections to sockets, and the
// connections queued on a crashed acceptor's socket are reset with it); an
// acceptor that passes the listening socket on to the next after each
// accept (its crash would close the socket). Chosen: one listener actor
// (lsock) owns the socket in active N(k) mode and is the only one to touch
// it; it hands each Accepted connection (a ControllingProcess and a
// message) to an acceptor that asked for one (a want). The acceptor starts
// the connection actor under the conns supervisor (a call to it), makes it
// the owner and sends it the socket (shoot), then asks for the next. So
// the listener's work per connection is one transfer and one send, and the
// rest runs on the acceptors, several at a time.
//
// Demand. lsock asks the socket for exactly as many connections as it can
// place: demand is the count of accepts asked of the socket (SetActive(N),
// which adds to a budget left) and not yet delivered, and lsock arms
// (arm) only while demand < ready acceptors and used + demand < MaxConns.
// Every accept the poller makes spends one from the budget and delivers
// one Accepted (a failed accept delivers an Error: lsock then sets the
// socket passive, forgets its demand and pauses), so demand, counted by
// lsock from the Accepted messages it handles, is the socket's budget. A
// Passive message (the budget ran out) is not counted: it may arrive after
// lsock has already armed again, and would zero a fresh budget.
//
// Counting. used counts the connections accepted and not yet ended. Each
// accepted connection gets a slot, an io.Closer held (System.Hold) by
// whichever actor has the connection: lsock, then the acceptor, then the
// connection actor (System.Transfer at each hand-over, beside the
// socket's ControllingProcess). A holder's death closes the slot, whatever
// the death (a kill included); closing it decrements used, once (closed),
// and tells lsock (slotFree) so that it arms again. A slot whose
// hand-over fails is released and closed by its holder (drop). So used
// never misses an end, and at MaxConns lsock accepts nothing until one.
// A slotFree may reach a lsock that has restarted, or none: the next lsock
// reads used when it arms, so a lost hint loses nothing.
//
// Hand-over races. An acceptor that asked and then died is found out when
// its ControllingProcess fails (ErrNoProc): the connection goes to the
// next ready acceptor, or waits in held for one. A connection actor that
// dies before its socket arrives makes the transfer fail, and the
// acceptor closes the socket and drops the slot. An acceptor that dies
// after starting a connection actor but before sending it the socket
// leaves it waiting: it monitors its acceptor while it waits, and stops
// (normal) at its Down. Messages from one sender arrive in order, so a
// socket sent before the acceptor's death is taken before the Down.

package acceptor

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/backoff"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/supervisor"
)

// Messages between the tree's actors.
type (
	want    struct{ from actor.Pid } // an acceptor to lsock: give me a connection
	handoff struct {                 // lsock to an acceptor: this one (owned by it)
		cn *netio.Conn
		s  *slot
	}
	shoot    struct{ cn *netio.Conn } // an acceptor to a connection actor: the socket is yours
	slotFree struct{}                 // a connection ended: arm again
	resume   struct{}                 // the pause after a failed accept is over
	stateReq struct{}                 // tests: lsock's demand, ready and held
)

// lsockState answers stateReq.
type lsockState struct{ Demand, Ready, Held int }

// slot is a connection's place in used: see the design note, "Counting".
type slot struct {
	l *Listener
	// release is the current holder's, from System.Hold or Transfer: used
	// only by the holder, and handed on with the slot in a message (a
	// Send happens before its Receive).
	release func() bool
	closed  atomic.Bool // Close's once
}

// newSlot counts a connection and has holder hold its slot.
func (l *Listener) newSlot(sys *actor.System, holder actor.Pid) (*slot, error) {
	l.used.Add(1)
	s := &slot{l: l}
	rel, err := sys.Hold(holder, s)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.release = rel
	return s, nil
}

// Close ends the connection's count, once: in the holder's death path (it
// must not block: an atomic and a Send), or by drop.
func (s *slot) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	l := s.l
	l.used.Add(-1)
	if l.o.maxConns > 0 {
		if p := l.lsock.Load(); p != nil {
			if sys := l.sys.Load(); sys != nil {
				sys.Send(*p, slotFree{}) // a hint: fails harmlessly once lsock or the System is gone
			}
		}
	}
	return nil
}

// transfer hands the slot to actor to (the caller holds it). On an error
// the caller still holds it (or its death has closed it).
func (s *slot) transfer(sys *actor.System, to actor.Pid) error {
	rel, err := sys.Transfer(s.release, to, s)
	if err != nil {
		return err
	}
	s.release = rel
	return nil
}

// drop releases and closes a slot its holder gives up.
func (s *slot) drop() {
	if s.release() {
		s.Close()
	}
}

// lsock owns the listening socket; see the design note.
type lsock struct {
	actor.ServerBase
	l      *Listener
	ln     *netio.Listener
	ready  []actor.Pid // acceptors that asked, oldest first (some may be dead)
	held   []handoff   // accepted, waiting for a ready acceptor (one died)
	demand int         // accepts asked of the socket and not yet delivered
	paused bool        // after a failed accept, until resume
	retry  *backoff.Backoff
}

func (s *lsock) Init(c *actor.Context) error {
	ln, err := netio.Listen(c.System(), c.Self(), s.l.listenAddr())
	if err != nil {
		return err
	}
	s.ln = ln
	s.retry, err = backoff.New(10*time.Millisecond, time.Second, backoff.Jitter(0.5), backoff.ResetAfter(10*time.Second))
	if err != nil {
		return err
	}
	// The closer unpublishes this actor at its death, unless a later one
	// has published itself: the pointer stored below is &self, the
	// variable the closure shares, so the swap compares identities.
	self := c.Self()
	if _, err := c.System().Hold(self, closerFunc(func() { s.l.lsock.CompareAndSwap(&self, nil) })); err != nil {
		return err
	}
	l := s.l
	l.mu.Lock()
	l.bound = ln.Addr()
	if l.port == 0 {
		l.port = l.bound.Port
	}
	l.mu.Unlock()
	l.lsock.Store(&self)
	return nil
}

func (s *lsock) HandleCall(c *actor.Context, req actor.Request) {
	if _, ok := req.Msg.(stateReq); ok {
		c.Reply(req, lsockState{s.demand, len(s.ready), len(s.held)})
		return
	}
	s.ServerBase.HandleCall(c, req)
}

func (s *lsock) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case want:
		s.ready = append(s.ready, m.from)
	case netio.Accepted:
		s.demand = max(s.demand-1, 0)
		s.l.accepted.Add(1)
		sl, err := s.l.newSlot(c.System(), c.Self())
		if err != nil { // we are dying
			m.Conn.Close()
			return
		}
		s.held = append(s.held, handoff{m.Conn, sl})
	case netio.Error: // an accept failed (EMFILE...): pause, then accept again
		if err := s.ln.SetActive(netio.Off); err != nil {
			c.Stop(err)
			return
		}
		s.demand, s.paused = 0, true
		d := s.retry.Next()
		c.System().Log("acceptor: %v: accept failed: %v; accepting again in %v", s.ln.Addr(), m.Err, d)
		if _, err := c.SendAfter(c.Self(), resume{}, d); err != nil {
			c.Stop(err)
			return
		}
	case resume:
		s.paused = false
	case slotFree, netio.Passive: // arm below
	default:
		return
	}
	s.handOut(c)
	s.arm(c)
}

// handOut gives held connections to ready acceptors.
func (s *lsock) handOut(c *actor.Context) {
	for len(s.held) > 0 && len(s.ready) > 0 {
		a, h := s.ready[0], s.held[0]
		s.ready = s.ready[1:]
		if err := h.cn.ControllingProcess(c, a); err != nil {
			if errors.Is(err, actor.ErrNoProc) {
				continue // that acceptor died: the next
			}
			h.cn.Close() // closed under us (the peer's reset does not do this)
			h.s.drop()
		} else if err := h.s.transfer(c.System(), a); err != nil {
			h.s.drop() // a died just now, and the socket with it
		} else {
			c.Send(a, h)
		}
		s.held[0] = handoff{}
		s.held = s.held[1:]
	}
}

// arm asks the socket for as many connections as can be placed now: see
// the design note, "Demand".
func (s *lsock) arm(c *actor.Context) {
	if s.paused {
		return
	}
	k := len(s.ready) - len(s.held) - s.demand
	if m := s.l.o.maxConns; m > 0 {
		k = min(k, m-int(s.l.used.Load())-s.demand)
	}
	if k <= 0 {
		return
	}
	if err := s.ln.SetActive(netio.N(k)); err != nil {
		c.Stop(err)
		return
	}
	s.demand += k
	s.retry.Success()
}

// acceptorServer is one acceptor: see the design note.
type acceptorServer struct {
	actor.ServerBase
	l     *Listener
	lsock actor.Pid
	conns actor.Pid
}

func (a *acceptorServer) Init(c *actor.Context) error {
	l := a.l
	l.mu.Lock()
	a.conns = l.conns
	l.mu.Unlock()
	p := l.lsock.Load()
	if p == nil || a.conns.IsZero() {
		return errors.New("acceptor: no listener to accept for")
	}
	a.lsock = *p
	return c.Send(a.lsock, want{c.Self()})
}

func (a *acceptorServer) HandleInfo(c *actor.Context, msg any) {
	if h, ok := msg.(handoff); ok {
		a.serve(c, h)
		c.Send(a.lsock, want{c.Self()})
	}
}

// serve starts h's connection actor and hands it the socket and the slot.
func (a *acceptorServer) serve(c *actor.Context, h handoff) {
	pid, err := supervisor.StartChildArgs(c, a.conns, c.Self())
	if err != nil {
		c.System().Log("acceptor: connection from %v dropped: %v", h.cn.RemoteAddr(), err)
		h.cn.Close()
		h.s.drop()
		return
	}
	if err := h.s.transfer(c.System(), pid); err != nil { // it died already
		h.cn.Close()
		h.s.drop()
		return
	}
	if err := h.cn.ControllingProcess(c, pid); err != nil {
		h.cn.Close() // its actor holds the slot: stop it, its death closes it
		supervisor.TerminateChildPid(c, a.conns, pid)
		return
	}
	c.Send(pid, shoot{h.cn})
}

// connServer is a connection actor: it waits for its socket, then runs the
// Handler.
type connServer struct {
	l    *Listener
	from actor.Pid // the acceptor that started it
	h    Handler
	up   bool // the Handler's Init returned nil
}

type handshake struct{}

func (l *Listener) newConn(args ...any) actor.Server {
	s := &connServer{l: l, h: l.newHandler()}
	if len(args) == 1 {
		s.from, _ = args[0].(actor.Pid)
	}
	return s
}

func (s *connServer) Init(c *actor.Context) error {
	if isNil(s.h) {
		return ErrNilHandler
	}
	return actor.Continue(handshake{})
}

// HandleContinue waits for the socket (or the acceptor's death) before any
// other message, then runs the Handler's Init.
func (s *connServer) HandleContinue(c *actor.Context, arg any) {
	if _, ok := arg.(handshake); !ok {
		if k, ok := s.h.(actor.Continuer); ok && s.up {
			k.HandleContinue(c, arg)
		}
		return
	}
	ref, err := c.Monitor(s.from)
	if err != nil {
		c.Stop(actor.Normal)
		return
	}
	m, err := c.Receive(func(m any) bool {
		switch m := m.(type) {
		case shoot:
			return true
		case actor.Down:
			return m.Ref == ref
		}
		return false
	}, actor.Infinity)
	sh, ok := m.(shoot)
	if err != nil || !ok { // the acceptor died before it handed the socket over
		c.Stop(actor.Normal)
		return
	}
	c.Demonitor(ref, true)
	if err := s.h.Init(c, sh.cn); err != nil {
		if errors.Is(err, actor.ErrIgnore) {
			c.Stop(actor.Normal)
		} else {
			c.Stop(actor.StopReason(err))
		}
		return
	}
	s.up = true
	if a := s.l.o.active; a != nil {
		sh.cn.SetActive(*a) // fails only on a socket Init closed: it knows
	}
}

func (s *connServer) HandleCall(c *actor.Context, req actor.Request) { s.h.HandleCall(c, req) }
func (s *connServer) HandleCast(c *actor.Context, msg any)           { s.h.HandleCast(c, msg) }
func (s *connServer) HandleInfo(c *actor.Context, msg any)           { s.h.HandleInfo(c, msg) }

func (s *connServer) Terminate(c *actor.Context, reason actor.Reason) {
	if s.up {
		s.h.Terminate(c, reason)
	}
}

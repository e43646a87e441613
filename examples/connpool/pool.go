package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// Errors a request can end with, besides the runtime's own (actor.ErrTimeout
// or the ctx's error when the caller gave up; an error that is actor.ErrNoProc
// when the pool itself died or was stopped before it answered).
var (
	ErrCircuitOpen     = errors.New("connpool: circuit open: upstream failing")
	ErrConnLost        = errors.New("connpool: connection lost mid-request")
	ErrUpstreamTimeout = errors.New("connpool: upstream did not reply in time")
	ErrProtocol        = errors.New("connpool: upstream sent a line nobody asked for")
	ErrWorkerDied      = errors.New("connpool: connection worker died mid-request")
	ErrPoolBusy        = errors.New("connpool: too many requests waiting")
	ErrPoolClosed      = errors.New("connpool: pool stopped")
	ErrBadLine         = errors.New("connpool: a request is one line")
	ErrNotLeased       = errors.New("connpool: lease not held (checked in, expired or revoked)")
	ErrLeaseBusy       = errors.New("connpool: lease already has a request in flight")
	ErrNotConnected    = errors.New("connpool: leased connection is down, reconnecting")
)

// Options configure a pool; zero fields take the defaults in withDefaults.
type Options struct {
	Name           string        // the pool's registered name
	Addr           string        // upstream host:port
	Size           int           // connections (workers)
	DialTimeout    time.Duration // one dial
	RequestTimeout time.Duration // from a request's write to its reply line
	BackoffMin     time.Duration // first reconnect delay, doubled per failure
	BackoffMax     time.Duration // cap on the reconnect delay
	Threshold      int           // consecutive failures that open the breaker
	OpenFor        time.Duration // how long the breaker stays open
	MaxQueue       int           // requests waiting for a connection
	LeaseTimeout   time.Duration // a checkout not checked in by then is revoked
	MaxLine        int           // longest reply line accepted
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.Name == "" {
		o.Name = "connpool"
	}
	if o.Size == 0 {
		o.Size = 4
	}
	def(&o.DialTimeout, time.Second)
	def(&o.RequestTimeout, 2*time.Second)
	def(&o.BackoffMin, 10*time.Millisecond)
	def(&o.BackoffMax, time.Second)
	def(&o.OpenFor, time.Second)
	def(&o.LeaseTimeout, 10*time.Second)
	if o.Threshold == 0 {
		o.Threshold = 5
	}
	if o.MaxQueue == 0 {
		o.MaxQueue = 1024
	}
	if o.MaxLine == 0 {
		o.MaxLine = 64 << 10
	}
	return o
}

// Breaker is the circuit breaker's state.
type Breaker int

const (
	Closed   Breaker = iota // requests flow; consecutive failures are counted
	Open                    // requests fail at once with ErrCircuitOpen
	HalfOpen                // one request (the probe) goes through; it decides
)

func (b Breaker) String() string { return [...]string{"closed", "open", "half-open"}[b] }

// Stats is a snapshot of the pool (Pool.Stats).
type Stats struct {
	Workers, Connected, Busy, Leased, Queued int
	Breaker                                  Breaker
	Opened                                   int // times the breaker opened
}

// Lease is a checked-out connection: its worker and the lease's id. Use it
// with Exec; give it back with Checkin. The pool takes it back by itself
// when the holder (an actor) dies, or after Options.LeaseTimeout.
type Lease struct {
	Worker actor.Pid
	ID     uint64
}

// Pool is a handle on a started pool: its registered name.
type Pool struct{ Name string }

// Calls to the pool, and casts.
type (
	doReq       struct{ line string }
	checkoutReq struct{}
	statsReq    struct{}
	hello       struct{} // a worker's Init: the pool answers with the address
	checkin     struct{ id uint64 }
	setAddr     struct{ addr string }
)

// Do sends one request line and returns the reply line; ctx bounds the wait
// (for the connection and for the reply). For plain Go code.
func (p Pool) Do(ctx context.Context, sys *actor.System, line string) (string, error) {
	if strings.ContainsAny(line, "\r\n") {
		return "", ErrBadLine
	}
	return actor.CallNameContext[string](ctx, sys, p.Name, doReq{line})
}

// Call is Do from an actor (or plain Go code), bounded by timeout.
func (p Pool) Call(c actor.Caller, line string, timeout time.Duration) (string, error) {
	if strings.ContainsAny(line, "\r\n") {
		return "", ErrBadLine
	}
	return actor.CallName[string](c, p.Name, doReq{line}, timeout)
}

// Checkout takes a connection for the caller's sole use (several requests in
// a row on one connection), waiting up to timeout for one to be free.
func (p Pool) Checkout(c actor.Caller, timeout time.Duration) (Lease, error) {
	return actor.CallName[Lease](c, p.Name, checkoutReq{}, timeout)
}

// Checkin gives a lease back. Checking in twice, or a lease that expired,
// does nothing.
func (p Pool) Checkin(s actor.Sender, l Lease) error {
	return actor.CastName(s, p.Name, checkin{l.ID})
}

// SetAddr points the pool at another upstream address: connections dialled
// from now on use it (those open stay until they fail).
func (p Pool) SetAddr(s actor.Sender, addr string) error {
	return actor.CastName(s, p.Name, setAddr{addr})
}

// Stats reads the pool's state.
func (p Pool) Stats(c actor.Caller) (Stats, error) {
	return actor.CallName[Stats](c, p.Name, statsReq{}, 5*time.Second)
}

// Exec sends one request on a checked-out connection.
func (l Lease) Exec(c actor.Caller, line string, timeout time.Duration) (string, error) {
	if strings.ContainsAny(line, "\r\n") {
		return "", ErrBadLine
	}
	return actor.Call[string](c, l.Worker, exec{l.ID, line}, timeout)
}

// Start starts a pool in sys: a rest_for_one supervisor of the pool manager
// (a gen_server under opt.Name) and a one_for_one supervisor of opt.Size
// connection workers. A pool manager that restarts gets new workers; a worker
// that dies is restarted alone and says hello to the pool again.
func Start(sys *actor.System, opt Options) (Pool, actor.Pid, error) {
	opt = opt.withDefaults()
	conns := supervisor.Spec{Intensity: 10 * opt.Size, Period: time.Second}
	for i := range opt.Size {
		conns.Children = append(conns.Children, supervisor.ChildSpec{
			ID:    fmt.Sprint("conn", i),
			Start: supervisor.ServerStart(func(...any) actor.Server { return &worker{opt: opt} }),
		})
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.RestForOne,
		Children: []supervisor.ChildSpec{
			{ID: "manager", Start: supervisor.ServerStart(
				func(...any) actor.Server { return newManager(opt) },
				// Trapping exits, the manager runs Terminate when the
				// supervisor stops it, and answers whoever still waits.
				actor.WithSpawn(actor.Name(opt.Name), actor.TrapExit()))},
			supervisor.Child("conns", conns),
		},
	})
	return Pool{opt.Name}, sup, err
}

// waiter is a call waiting for a connection: a request to route, or a checkout.
type waiter struct {
	req      actor.Request
	line     string
	checkout bool
	probe    bool // the half-open breaker's one request
}

// wstate is the manager's view of a worker, built from the worker's own
// messages (up, down, done, returned), which arrive in the order sent.
type wstate struct {
	connected bool
	busy      *waiter // a routed request the worker has
	leased    bool    // from checkout until the worker says returned
	lease     uint64  // the lease in force; 0 once checked in
	mon       actor.Ref
}

type lease struct {
	Lease
	mon   actor.Ref // of the holder, if it is an actor
	timer actor.TimerRef
}

// manager is the pool's gen_server: it routes requests to idle connected
// workers, hands out leases, and runs the circuit breaker.
type manager struct {
	actor.ServerBase
	opt     Options
	workers map[actor.Pid]*wstate
	order   []actor.Pid // workers in hello order, for a round robin
	next    int
	queue   []*waiter
	leases  map[uint64]*lease
	holders map[actor.Ref]uint64 // holder monitor -> lease
	lastID  uint64

	state   Breaker
	fails   int // consecutive failures while Closed
	probing bool
	openT   actor.TimerRef
	opened  int
}

func newManager(opt Options) *manager {
	return &manager{opt: opt, workers: map[actor.Pid]*wstate{},
		leases: map[uint64]*lease{}, holders: map[actor.Ref]uint64{}}
}

// Manager's messages: from workers, and its timers' (in actor.Timeout).
type (
	up   struct{ w actor.Pid }
	down struct {
		w    actor.Pid
		err  error
		dial bool // a dial failed (else a connection was lost)
	}
	done struct {
		w      actor.Pid
		routed bool
		res    result
	}
	returned     struct{ w actor.Pid }
	halfOpen     struct{}
	leaseExpired struct{ id uint64 }
)

type result int

const (
	resOK     result = iota
	resFailed        // the upstream failed it (counts toward the breaker)
	resBounce        // the worker could not send it: route it again
	resGaveUp        // its caller had given up before it was sent
)

func (m *manager) HandleCall(c *actor.Context, req actor.Request) {
	switch q := req.Msg.(type) {
	case hello:
		w := req.From()
		mon, err := c.Monitor(w)
		if err != nil {
			c.ReplyError(req, err)
			return
		}
		m.workers[w] = &wstate{mon: mon}
		m.order = append(m.order, w)
		c.Reply(req, m.opt.Addr)
	case doReq:
		m.enqueue(c, &waiter{req: req, line: q.line})
	case checkoutReq:
		m.enqueue(c, &waiter{req: req, checkout: true})
	case statsReq:
		s := Stats{Workers: len(m.workers), Queued: len(m.queue), Breaker: m.state, Opened: m.opened}
		for _, ws := range m.workers {
			s.Connected += b2i(ws.connected)
			s.Busy += b2i(ws.busy != nil)
			s.Leased += b2i(ws.leased)
		}
		c.Reply(req, s)
	default:
		m.ServerBase.HandleCall(c, req)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (m *manager) HandleCast(c *actor.Context, msg any) {
	switch q := msg.(type) {
	case checkin:
		m.release(c, q.id)
	case setAddr:
		m.opt.Addr = q.addr
		for _, w := range m.order {
			c.Send(w, newAddr(q))
		}
	}
}

func (m *manager) HandleInfo(c *actor.Context, msg any) {
	switch q := msg.(type) {
	case up:
		if ws := m.workers[q.w]; ws != nil {
			ws.connected = true
		}
	case down:
		if ws := m.workers[q.w]; ws != nil {
			ws.connected = false
		}
		if q.dial {
			m.failure(c)
		}
	case done:
		ws := m.workers[q.w]
		var wt *waiter
		if ws != nil && q.routed {
			wt, ws.busy = ws.busy, nil
		}
		switch {
		case q.res == resBounce && wt != nil:
			m.queue = append([]*waiter{wt}, m.queue...)
		case q.res == resGaveUp && wt != nil && wt.probe:
			m.probing = false
		case q.res == resOK:
			m.success(wt)
		case q.res == resFailed:
			m.failure(c)
		}
	case returned:
		if ws := m.workers[q.w]; ws != nil {
			ws.leased = false
		}
	case actor.Down:
		if id, ok := m.holders[q.Ref]; ok { // a holder died: take its lease back
			m.release(c, id)
			break
		}
		ws := m.workers[q.Pid]
		if ws == nil || ws.mon != q.Ref {
			break
		}
		// A worker died. A routed request it had was answered by it, or is
		// answered here (a second answer would be ignored: a Request is
		// answered at most once). Its supervisor restarts it; the new one
		// says hello.
		if ws.busy != nil {
			c.ReplyError(ws.busy.req, diedErr(q.Reason))
			if ws.busy.probe {
				m.probing = false
			}
		}
		if l := m.leases[ws.lease]; l != nil {
			m.drop(c, l)
		}
		delete(m.workers, q.Pid)
		for i, w := range m.order {
			if w == q.Pid {
				m.order = append(m.order[:i], m.order[i+1:]...)
				break
			}
		}
	case actor.Timeout:
		switch t := q.Msg.(type) {
		case halfOpen:
			if q.Ref == m.openT && m.state == Open {
				m.state = HalfOpen
			}
		case leaseExpired:
			m.release(c, t.id)
		}
	}
	m.dispatch(c)
}

// Terminate answers every caller still waiting: the pool is going away.
func (m *manager) Terminate(c *actor.Context, _ actor.Reason) {
	for _, wt := range m.queue {
		c.ReplyError(wt.req, ErrPoolClosed)
	}
	for _, ws := range m.workers {
		if ws.busy != nil {
			c.ReplyError(ws.busy.req, ErrPoolClosed)
		}
	}
}

func diedErr(r actor.Reason) error {
	if actor.IsShutdown(r) {
		return ErrPoolClosed
	}
	return fmt.Errorf("%w: %v", ErrWorkerDied, r)
}

// enqueue queues a call, unless the breaker refuses it or the queue is full.
func (m *manager) enqueue(c *actor.Context, wt *waiter) {
	if !m.admit(c, wt) {
		c.ReplyError(wt.req, ErrCircuitOpen)
		return
	}
	if len(m.queue) >= m.opt.MaxQueue {
		m.prune(c)
	}
	if len(m.queue) >= m.opt.MaxQueue {
		if wt.probe {
			m.probing = false
		}
		c.ReplyError(wt.req, ErrPoolBusy)
		return
	}
	m.queue = append(m.queue, wt)
	m.dispatch(c)
}

// admit applies the breaker: Closed lets everything in, Open nothing,
// HalfOpen one routed request at a time (the probe).
func (m *manager) admit(c *actor.Context, wt *waiter) bool {
	switch m.state {
	case Closed:
		return true
	case HalfOpen:
		if m.probing {
			m.prune(c) // a probe whose caller gave up while queued probes nothing
		}
		if m.probing || wt.checkout {
			return false
		}
		m.probing, wt.probe = true, true
		return true
	}
	return false
}

// prune drops the queued calls whose callers no longer wait.
func (m *manager) prune(c *actor.Context) {
	q := m.queue[:0]
	for _, wt := range m.queue {
		if c.Waiting(wt.req) {
			q = append(q, wt)
		} else if wt.probe {
			m.probing = false
		}
	}
	clear(m.queue[len(q):])
	m.queue = q
}

// pick returns an idle connected worker, round robin, or the zero Pid.
func (m *manager) pick() actor.Pid {
	for range m.order {
		m.next = (m.next + 1) % len(m.order)
		w := m.order[m.next]
		if ws := m.workers[w]; ws.connected && ws.busy == nil && !ws.leased {
			return w
		}
	}
	return actor.Pid{}
}

// dispatch hands queued calls to idle workers. A call whose caller has given
// up (timeout, cancelled ctx, dead caller) is dropped here, unsent.
func (m *manager) dispatch(c *actor.Context) {
	for len(m.queue) > 0 {
		w := m.pick()
		if w.IsZero() {
			return
		}
		wt := m.queue[0]
		m.queue[0] = nil
		m.queue = m.queue[1:]
		if !c.Waiting(wt.req) {
			if wt.probe {
				m.probing = false
			}
			continue
		}
		ws := m.workers[w]
		if wt.checkout {
			m.grant(c, w, ws, wt.req)
			continue
		}
		ws.busy = wt
		c.Send(w, job{wt.req, wt.line})
	}
}

// grant leases worker w to the caller of req, monitoring the caller if it
// is an actor (a caller from plain Go code has no pid: only the lease
// timeout protects the pool from one that forgets to check in).
func (m *manager) grant(c *actor.Context, w actor.Pid, ws *wstate, req actor.Request) {
	m.lastID++
	l := &lease{Lease: Lease{Worker: w, ID: m.lastID}}
	if h := req.From(); !h.IsZero() {
		l.mon, _ = c.Monitor(h)
		m.holders[l.mon] = l.ID
	}
	l.timer, _ = c.StartTimer(c.Self(), leaseExpired{l.ID}, m.opt.LeaseTimeout)
	m.leases[l.ID] = l
	ws.leased, ws.lease = true, l.ID
	c.Send(w, grant{l.ID}) // before the reply: the holder's first Exec comes after it
	if !c.Reply(req, l.Lease) {
		m.release(c, l.ID) // the caller gave up meanwhile
	}
}

// release ends lease id (checkin, holder death, expiry): the worker is told,
// and says returned once it has finished any request of the lease in flight.
func (m *manager) release(c *actor.Context, id uint64) {
	l := m.leases[id]
	if l == nil {
		return
	}
	m.drop(c, l)
	c.Send(l.Worker, revoke{id})
}

func (m *manager) drop(c *actor.Context, l *lease) {
	delete(m.leases, l.ID)
	if l.mon != 0 {
		c.Demonitor(l.mon, true)
		delete(m.holders, l.mon)
	}
	c.CancelTimer(l.timer)
	if ws := m.workers[l.Worker]; ws != nil && ws.lease == l.ID {
		ws.lease = 0
	}
}

// success and failure drive the breaker. While Open, outcomes of requests
// sent before it opened tell nothing new; while HalfOpen only the probe's
// outcome closes it, and any failure (the probe's, a dial's) opens it again.
func (m *manager) success(wt *waiter) {
	switch {
	case m.state == Closed:
		m.fails = 0
	case m.state == HalfOpen && wt != nil && wt.probe:
		m.state, m.fails, m.probing = Closed, 0, false
	}
}

func (m *manager) failure(c *actor.Context) {
	switch m.state {
	case Closed:
		if m.fails++; m.fails >= m.opt.Threshold {
			m.open(c)
		}
	case HalfOpen: // the probe failed, or a dial did: still down
		m.open(c)
	}
}

// open opens the breaker for OpenFor and fails every queued call.
func (m *manager) open(c *actor.Context) {
	m.state, m.fails, m.probing = Open, 0, false
	m.opened++
	m.openT, _ = c.StartTimer(c.Self(), halfOpen{}, m.opt.OpenFor)
	for _, wt := range m.queue {
		c.ReplyError(wt.req, ErrCircuitOpen)
	}
	clear(m.queue)
	m.queue = m.queue[:0]
}

// The pool's manager: a gen_server that lends its workers out.
//
// Design note.
//
// The problem is poolboy's: lend workers to callers one at a time, never
// lose one (to a holder that died, a caller that gave up, a worker that
// crashed) and never hand one to two callers. Everything the pool knows
// lives in one actor, the manager, so each rule is a step of one handler
// and needs no lock; the workers are linked to it (it traps exits) and it
// monitors every holder and every actor that waits.
//
// Every live worker is in exactly one of two places: idle, or busy (with
// its holder and the holder's monitor). A worker leaves busy by a checkin,
// its holder's Down, or its own death; whichever comes first removes it,
// so the others find nothing and do nothing (a stale checkin, a Down of a
// monitor already demonitored with flush, an Exit of a dismissed worker
// that was unlinked). free is the one place a worker that has stopped
// being busy goes: to the oldest waiting checkout whose caller still
// waits, else dismissed if overflow workers run, else idle.
//
// Handing out is grant: record the worker busy, then Reply. Reply reports
// whether the caller took the reply (the call had not ended): if not, the
// worker is freed again at once. So a caller that timed out between the
// manager's look at Waiting and the reply costs nothing, and the FIFO
// needs no cancel message from callers that give up (poolboy's
// cancel_waiting): entries whose callers no longer wait are skipped when
// reached, and pruned when the queue is counted or bounded.
//
// Workers that die are replaced (replace): the pool owes one more worker
// (missing) unless overflow workers run and nobody waits, in which case
// it shrinks. A replacement that fails to start stays owed and is retried
// after a backoff; the manager's own timer, a message to itself, so the
// manager never blocks waiting to retry.

package pool

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/backoff"
	"github.com/colonyrt/colony/supervisor"
)

type manager struct {
	actor.ServerBase
	p        *Pool
	sup      actor.Pid               // the workers' supervisor, linked
	workers  map[actor.Pid]bool      // every live worker: idle or busy
	idle     []actor.Pid             // LIFO: the last is next; FIFO: the first
	busy     map[actor.Pid]holding   // checked out
	holders  map[actor.Ref]actor.Pid // a holder's monitor -> its worker
	waiting  []waiter                // oldest first
	overflow int                     // workers beyond Size
	missing  int                     // workers owed (their start failed)
	restart  *restarter
}

type holding struct {
	holder actor.Pid // zero: a caller from plain Go code
	mon    actor.Ref // 0 when holder is zero
}

type waiter struct {
	req actor.Request
	mon actor.Ref // of its caller, 0 for plain Go code
}

// debugReq (tests) answers the idle workers and the busy ones' holders.
type debugReq struct{}

type debugState struct {
	Idle []actor.Pid
	Busy map[actor.Pid]actor.Pid
}

func (p *Pool) newManager() *manager {
	return &manager{p: p, workers: map[actor.Pid]bool{}, busy: map[actor.Pid]holding{},
		holders: map[actor.Ref]actor.Pid{}}
}

// workerSup starts the workers' supervisor, linked to c.
func workerSup(c *actor.Context, start StartFunc, o *options) (actor.Pid, error) {
	return supervisor.StartLink(c, supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Hooks: o.hooks,
		Children: []supervisor.ChildSpec{{ID: "worker", Restart: supervisor.Temporary, Shutdown: o.workerShutdown,
			Start: func(c *actor.Context, _ ...any) (actor.Pid, error) { return start(c) }}}})
}

// startWorker starts a worker under sup and links c's actor to it.
func startWorker(c *actor.Context, sup actor.Pid) (actor.Pid, error) {
	w, err := supervisor.StartChildArgs(c, sup)
	if err != nil {
		return actor.Pid{}, err
	}
	if w.IsZero() {
		return actor.Pid{}, errors.New("pool: the StartFunc started no worker")
	}
	if err := c.Link(w); err != nil { // it died already (its Exit{noproc} is ignored)
		return actor.Pid{}, fmt.Errorf("pool: worker %v died as it started: %w", w, err)
	}
	return w, nil
}

func (m *manager) Init(c *actor.Context) error {
	c.TrapExit(true)
	o := &m.p.o
	var err error
	if m.sup, err = workerSup(c, m.p.start, o); err != nil {
		return err
	}
	for range o.size {
		w, err := startWorker(c, m.sup)
		if err != nil {
			return err
		}
		m.workers[w] = true
		m.idle = append(m.idle, w)
	}
	m.restart = newRestarter()
	return m.p.up(c)
}

func (m *manager) HandleCall(c *actor.Context, req actor.Request) {
	switch q := req.Msg.(type) {
	case checkoutReq:
		m.checkout(c, req, q.block)
	case statusReq:
		m.prune(c)
		c.Reply(req, Status{Size: m.p.o.size, Idle: len(m.idle), Busy: len(m.busy),
			Overflow: m.overflow, Waiting: len(m.waiting), Missing: m.missing})
	case debugReq:
		d := debugState{Idle: slices.Clone(m.idle), Busy: map[actor.Pid]actor.Pid{}}
		for w, h := range m.busy {
			d.Busy[w] = h.holder
		}
		c.Reply(req, d)
	default:
		m.ServerBase.HandleCall(c, req)
	}
}

func (m *manager) HandleCast(c *actor.Context, msg any) {
	if q, ok := msg.(checkinMsg); ok {
		m.checkin(c, q.w)
	}
}

func (m *manager) HandleInfo(c *actor.Context, msg any) {
	switch q := msg.(type) {
	case actor.Down:
		if w, ok := m.holders[q.Ref]; ok { // a holder died: its worker comes back
			delete(m.holders, q.Ref)
			delete(m.busy, w)
			m.free(c, w)
			return
		}
		if i := slices.IndexFunc(m.waiting, func(wt waiter) bool { return wt.mon == q.Ref }); i >= 0 {
			m.waiting = slices.Delete(m.waiting, i, i+1) // a waiting caller died
		}
	case actor.Exit:
		switch {
		case m.workers[q.From]:
			m.lost(c, q.From)
		case q.From == m.sup: // the workers' supervisor died: so do we
			c.Stop(q.Reason)
		}
	case restartTick:
		m.restart.armed = false
		m.refill(c)
	}
}

// Terminate stops the workers (through their supervisor, by their
// Shutdown) before the manager exits.
func (m *manager) Terminate(c *actor.Context, _ actor.Reason) { stopSup(c, m.sup) }

// stopSup stops sup, c's child, and waits for it.
func stopSup(c *actor.Context, sup actor.Pid) {
	if sup.IsZero() {
		return
	}
	ref, err := c.Monitor(sup)
	if err != nil {
		return
	}
	c.Exit(sup, actor.Shutdown)
	c.Receive(func(m any) bool { d, ok := m.(actor.Down); return ok && d.Ref == ref }, actor.Infinity)
}

func (m *manager) checkout(c *actor.Context, req actor.Request, block bool) {
	if w, ok := m.popIdle(); ok {
		if !m.grant(c, req, w, 0) {
			m.free(c, w)
		}
		return
	}
	if m.overflow < m.p.o.maxOverflow {
		w, err := startWorker(c, m.sup)
		if err != nil {
			c.ReplyError(req, err)
			return
		}
		m.workers[w] = true
		m.overflow++
		if !m.grant(c, req, w, 0) {
			m.free(c, w)
		}
		return
	}
	if !block {
		c.ReplyError(req, ErrFull)
		return
	}
	if n := m.p.o.maxWaiting; n > 0 && len(m.waiting) >= n {
		if m.prune(c); len(m.waiting) >= n {
			c.ReplyError(req, ErrQueueFull)
			return
		}
	}
	wt := waiter{req: req}
	if h := req.From(); !h.IsZero() {
		wt.mon, _ = c.Monitor(h) // a dead caller's Down comes at once: it leaves the queue
	}
	m.waiting = append(m.waiting, wt)
}

// grant hands w to req's caller, monitoring it (mon: a monitor of it
// already held, from its wait); false, with w not busy and the monitor
// gone, if the caller no longer waits.
func (m *manager) grant(c *actor.Context, req actor.Request, w actor.Pid, mon actor.Ref) bool {
	h := holding{holder: req.From(), mon: mon}
	if !h.holder.IsZero() && mon == 0 {
		h.mon, _ = c.Monitor(h.holder)
	}
	if !c.Reply(req, w) {
		if h.mon != 0 {
			c.Demonitor(h.mon, true)
		}
		return false
	}
	m.busy[w] = h
	if h.mon != 0 {
		m.holders[h.mon] = w
	}
	return true
}

// checkin takes w back from its holder; a w not busy is left alone.
func (m *manager) checkin(c *actor.Context, w actor.Pid) {
	h, ok := m.busy[w]
	if !ok {
		return
	}
	delete(m.busy, w)
	if h.mon != 0 {
		c.Demonitor(h.mon, true)
		delete(m.holders, h.mon)
	}
	m.free(c, w)
}

// free places a worker that is no longer busy: see the design note.
func (m *manager) free(c *actor.Context, w actor.Pid) {
	for len(m.waiting) > 0 {
		wt := m.waiting[0]
		m.waiting[0] = waiter{}
		m.waiting = m.waiting[1:]
		if c.Waiting(wt.req) && m.grant(c, wt.req, w, wt.mon) {
			return
		}
		if wt.mon != 0 {
			c.Demonitor(wt.mon, true)
		}
	}
	if m.overflow > 0 {
		m.overflow--
		delete(m.workers, w)
		c.Unlink(w) // its exit is ours to cause, not to replace
		supervisor.TerminateChildPid(c, m.sup, w)
		return
	}
	m.idle = append(m.idle, w)
}

func (m *manager) popIdle() (actor.Pid, bool) {
	n := len(m.idle)
	if n == 0 {
		return actor.Pid{}, false
	}
	var w actor.Pid
	if m.p.o.fifo {
		w = m.idle[0]
		m.idle = slices.Delete(m.idle, 0, 1)
	} else {
		w = m.idle[n-1]
		m.idle = m.idle[:n-1]
	}
	return w, true
}

// lost forgets a worker that died and replaces it.
func (m *manager) lost(c *actor.Context, w actor.Pid) {
	delete(m.workers, w)
	if h, ok := m.busy[w]; ok {
		delete(m.busy, w)
		if h.mon != 0 {
			c.Demonitor(h.mon, true)
			delete(m.holders, h.mon)
		}
	} else if i := slices.Index(m.idle, w); i >= 0 {
		m.idle = slices.Delete(m.idle, i, i+1)
	}
	if m.overflow > 0 && !m.anyWaiting(c) {
		m.overflow-- // shrink instead
		return
	}
	m.missing++
	m.refill(c)
}

// refill starts the workers owed, placing each as free does; on a failure
// it arms a retry.
func (m *manager) refill(c *actor.Context) {
	for m.missing > 0 {
		w, err := startWorker(c, m.sup)
		if err != nil {
			m.restart.failed(c, err)
			return
		}
		m.missing--
		m.workers[w] = true
		m.free(c, w)
	}
	m.restart.ok()
}

// anyWaiting prunes the queue and reports whether a caller still waits.
func (m *manager) anyWaiting(c *actor.Context) bool {
	m.prune(c)
	return len(m.waiting) > 0
}

// prune drops the waiting checkouts whose callers no longer wait.
func (m *manager) prune(c *actor.Context) {
	m.waiting = slices.DeleteFunc(m.waiting, func(wt waiter) bool {
		if c.Waiting(wt.req) {
			return false
		}
		if wt.mon != 0 {
			c.Demonitor(wt.mon, true)
		}
		return true
	})
}

// restartTick is the restarter's timer message.
type restartTick struct{}

// restarter retries the start of owed workers after a backoff.
type restarter struct {
	b     *backoff.Backoff
	armed bool
}

func newRestarter() *restarter {
	b, err := backoff.New(10*time.Millisecond, time.Second, backoff.Jitter(0.5))
	if err != nil {
		panic(err) // constant arguments
	}
	return &restarter{b: b}
}

func (r *restarter) failed(c *actor.Context, err error) {
	if r.armed {
		return
	}
	d := r.b.Next()
	c.System().Log("pool: %v: a worker failed to start: %v; retrying in %v", c.Self(), err, d)
	if _, serr := c.SendAfter(c.Self(), restartTick{}, d); serr == nil {
		r.armed = true
	}
}

func (r *restarter) ok() { r.b.Success() }

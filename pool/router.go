// The router: calls and casts spread over workers.
//
// Design note.
//
// A call is handed on, not proxied: the router sends the caller's
// actor.Request itself to a worker, whose HandleCall answers the caller
// directly (gen_server:reply from another process), so a routed call costs
// the router one message and holds nothing of it but the Request. The
// caller watches only the router (its Call monitors the router), so the
// router answers for its workers' deaths: it keeps, per worker, the
// Requests it routed there in order, and when the worker dies it answers
// each one whose caller still waits with ErrWorkerDied (a Request is
// answered once: a reply the worker sent before dying wins, and the
// router's ReplyError is ignored).
//
// Those lists are also the load LeastLoaded routes by: a worker's load is
// the number of its routed calls whose callers still wait. The router is
// not told when a worker answers; it prunes each list from its front of
// the calls that have ended (System.Waiting: answered, timed out, or the
// caller died) when it looks at the list. A worker that answers out of
// order leaves ended calls behind a slow one until that one ends, so the
// load is an upper bound, exact for workers that answer in order. Casts
// carry no answer and are not counted.

package pool

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// Router spreads calls and casts over its workers: see the package doc.
// Make one with StartRouter, or NewRouter for ChildSpec. A *Router is a
// handle, safe for concurrent use.
type Router struct {
	handle
	start StartFunc
	o     options
}

// NewRouter returns a Router for ChildSpec. Errors: ErrBadOption (also
// for a Pool-only option).
func NewRouter(start StartFunc, opts ...Option) (*Router, error) {
	o, err := newOptions(start, opts)
	if err != nil {
		return nil, err
	}
	if o.poolOnly != "" {
		return nil, fmt.Errorf("%w: %s is a Pool option", ErrBadOption, o.poolOnly)
	}
	return &Router{start: start, o: o}, nil
}

// StartRouter starts a Router in sys, from outside any tree, and returns
// once its Size workers run. Errors: those of NewRouter; a worker's start
// error; actor.ErrStopped after the System's Shutdown.
func StartRouter(sys *actor.System, start StartFunc, opts ...Option) (*Router, error) {
	if sys == nil {
		return nil, actor.ErrNilSystem
	}
	r, err := NewRouter(start, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := r.startServer(sys, nil, r.o.name, r.newServer()); err != nil {
		return nil, err
	}
	return r, nil
}

// ChildSpec returns the child spec that runs r in a supervision tree.
func (r *Router) ChildSpec(id string) supervisor.ChildSpec {
	return r.childSpec(id, func() actor.Server { return r.newServer() }, r.o.name)
}

// Call routes req to a worker, whose HandleCall gets it as an
// actor.Request and answers it, and waits up to timeout for the answer.
// Errors: the worker's, ErrWorkerDied (wrapped), ErrNoWorkers,
// actor.ErrTimeout, actor.ErrNoProc (the router does not run).
func (r *Router) Call(c actor.Caller, req any, timeout time.Duration) (any, error) {
	return call[any](&r.handle, c, req, timeout)
}

// RouteCall is the typed form of Router.Call: the answer is asserted to T,
// as actor.Call's.
func RouteCall[T any](c actor.Caller, r *Router, req any, timeout time.Duration) (T, error) {
	return call[T](&r.handle, c, req, timeout)
}

// Cast routes msg to a worker's HandleCast (actor.Cast). A cast when no
// worker lives is dropped, as a cast to a dead actor is. Errors: those of
// a Send; actor.ErrNoProc when the router does not run.
func (r *Router) Cast(s actor.Sender, msg any) error {
	pid := r.current()
	if pid.IsZero() {
		return actor.ErrNoProc
	}
	return actor.Cast(s, pid, msg)
}

type workersReq struct{}

// Workers lists the router's live workers.
func (r *Router) Workers(c actor.Caller) ([]actor.Pid, error) {
	return call[[]actor.Pid](&r.handle, c, workersReq{}, 5*time.Second)
}

// Stop stops a Router started with StartRouter, as Pool.Stop does.
func (r *Router) Stop(ctx context.Context) error { return r.stop(ctx) }

// Pid returns the router's pid while it runs (the zero Pid otherwise).
func (r *Router) Pid() actor.Pid { return r.current() }

type routerServer struct {
	actor.ServerBase
	r       *Router
	sup     actor.Pid
	workers []actor.Pid                   // live workers, in start order
	calls   map[actor.Pid][]actor.Request // routed to each worker, oldest first
	next    int                           // the last worker routed to
	missing int
	restart *restarter
}

func (r *Router) newServer() *routerServer {
	return &routerServer{r: r, calls: map[actor.Pid][]actor.Request{}}
}

func (s *routerServer) Init(c *actor.Context) error {
	c.TrapExit(true)
	var err error
	if s.sup, err = workerSup(c, s.r.start, &s.r.o); err != nil {
		return err
	}
	for range s.r.o.size {
		w, err := startWorker(c, s.sup)
		if err != nil {
			return err
		}
		s.workers = append(s.workers, w)
	}
	s.next = len(s.workers) - 1
	s.restart = newRestarter()
	return s.r.up(c)
}

func (s *routerServer) HandleCall(c *actor.Context, req actor.Request) {
	if _, ok := req.Msg.(workersReq); ok {
		c.Reply(req, slices.Clone(s.workers))
		return
	}
	w, ok := s.pick(c)
	if !ok {
		c.ReplyError(req, ErrNoWorkers)
		return
	}
	s.calls[w] = append(s.calls[w], req)
	c.Send(w, req)
}

func (s *routerServer) HandleCast(c *actor.Context, msg any) {
	if w, ok := s.pick(c); ok {
		actor.Cast(c, w, msg)
	}
}

func (s *routerServer) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Exit:
		if i := slices.Index(s.workers, m.From); i >= 0 {
			s.lost(c, i, m.Reason)
		} else if m.From == s.sup {
			c.Stop(m.Reason)
		}
	case restartTick:
		s.restart.armed = false
		s.refill(c)
	}
}

func (s *routerServer) Terminate(c *actor.Context, _ actor.Reason) { stopSup(c, s.sup) }

// pick chooses the next worker: round robin, or the least loaded (ties:
// the next in round-robin order).
func (s *routerServer) pick(c *actor.Context) (actor.Pid, bool) {
	n := len(s.workers)
	if n == 0 {
		return actor.Pid{}, false
	}
	if !s.r.o.leastLoaded {
		s.next = (s.next + 1) % n
		w := s.workers[s.next]
		s.calls[w] = s.pruned(c, w)
		return w, true
	}
	best, load := -1, 0
	for k := 1; k <= n; k++ {
		i := (s.next + k) % n
		l := len(s.pruned(c, s.workers[i]))
		if best < 0 || l < load {
			best, load = i, l
		}
	}
	s.next = best
	return s.workers[best], true
}

// pruned drops from w's list, and returns, the calls from its front that
// have ended.
func (s *routerServer) pruned(c *actor.Context, w actor.Pid) []actor.Request {
	l := s.calls[w]
	i := 0
	for i < len(l) && !c.Waiting(l[i]) {
		i++
	}
	if i == len(l) {
		l = nil
	} else if i > 0 {
		l = slices.Delete(l, 0, i)
	}
	s.calls[w] = l
	return l
}

// lost answers the calls routed to the dead worker i and replaces it.
func (s *routerServer) lost(c *actor.Context, i int, reason actor.Reason) {
	w := s.workers[i]
	s.workers = slices.Delete(s.workers, i, i+1)
	if s.next >= i && s.next > 0 {
		s.next--
	}
	for _, req := range s.calls[w] {
		c.ReplyError(req, fmt.Errorf("%w: %v exited: %v", ErrWorkerDied, w, reason)) // ignored if answered
	}
	delete(s.calls, w)
	s.missing++
	s.refill(c)
}

func (s *routerServer) refill(c *actor.Context) {
	for s.missing > 0 {
		w, err := startWorker(c, s.sup)
		if err != nil {
			s.restart.failed(c, err)
			return
		}
		s.missing--
		s.workers = append(s.workers, w)
	}
	s.restart.ok()
}

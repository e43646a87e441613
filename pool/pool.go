package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// StartFunc starts one worker, linked to the calling actor (c's: the
// workers' supervisor), as actor.Context.SpawnLink and actor.SpawnServer
// do.
type StartFunc func(c *actor.Context) (actor.Pid, error)

// Errors.
var (
	// ErrBadOption: New or Start given a nil StartFunc or a bad option;
	// the error wraps it and says which.
	ErrBadOption = errors.New("pool: bad option")
	// ErrFull: a checkout that does not wait found no idle worker and no
	// overflow left.
	ErrFull = errors.New("pool: no worker free")
	// ErrQueueFull: a checkout found MaxWaiting checkouts waiting.
	ErrQueueFull = errors.New("pool: too many checkouts waiting")
	// ErrWorkerDied: a Router's worker died with a call routed to it; the
	// error wraps the worker's exit reason when it is an error, and says it.
	ErrWorkerDied = errors.New("pool: worker died")
	// ErrNoWorkers: a Router has no live worker to route to (its
	// replacements failed to start).
	ErrNoWorkers = errors.New("pool: no live worker")
	// ErrRunning: a pool started while it already runs.
	ErrRunning = errors.New("pool: already running")
	// ErrEmbedded: Stop of a pool that runs in another tree (ChildSpec):
	// stop that tree, or its child.
	ErrEmbedded = errors.New("pool: embedded in another tree")
)

// Option configures a Pool or a Router.
type Option func(*options)

type options struct {
	size           int
	maxOverflow    int
	maxWaiting     int // 0: no bound
	fifo           bool
	leastLoaded    bool
	workerShutdown time.Duration
	hooks          *supervisor.Hooks
	name           string
	poolOnly       string // the first Pool-only option given, for NewRouter
	routerOnly     string // the first Router-only option given, for New
	err            error  // the first bad option
}

func (o *options) bad(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
	}
}

func (o *options) onlyPool(name string) {
	if o.poolOnly == "" {
		o.poolOnly = name
	}
}

// MaxWorkers bounds Size and MaxOverflow.
const MaxWorkers = 1 << 16

// Size sets the number of workers (default 5, as poolboy's), 1 to
// MaxWorkers.
func Size(n int) Option {
	return func(o *options) {
		if n < 1 || n > MaxWorkers {
			o.bad("Size(%d): want 1 to %d", n, MaxWorkers)
		}
		o.size = n
	}
}

// MaxOverflow sets how many workers a Pool may start beyond Size while
// every worker is checked out (default 0), 0 to MaxWorkers. Pool only.
func MaxOverflow(n int) Option {
	return func(o *options) {
		o.onlyPool("MaxOverflow")
		if n < 0 || n > MaxWorkers {
			o.bad("MaxOverflow(%d): want 0 to %d", n, MaxWorkers)
		}
		o.maxOverflow = n
	}
}

// MaxWaiting bounds the waiting checkouts of a Pool (default: no bound);
// n must be positive. Pool only.
func MaxWaiting(n int) Option {
	return func(o *options) {
		o.onlyPool("MaxWaiting")
		if n < 1 {
			o.bad("MaxWaiting(%d): want > 0 (leave it out for no bound)", n)
		}
		o.maxWaiting = n
	}
}

// FIFO makes a Pool hand out the idle worker checked in first (poolboy's
// fifo strategy: the load spreads over every worker) instead of the one
// checked in last (lifo, the default: the fewest workers stay warm). Pool
// only.
func FIFO() Option { return func(o *options) { o.onlyPool("FIFO"); o.fifo = true } }

// LeastLoaded makes a Router route each call and cast to the worker with
// the fewest routed calls still waiting for their reply (ties: round
// robin) instead of round robin. Router only.
func LeastLoaded() Option {
	return func(o *options) {
		if o.routerOnly == "" {
			o.routerOnly = "LeastLoaded"
		}
		o.leastLoaded = true
	}
}

// WorkerShutdown sets how a worker is stopped (the workers' child spec's
// Shutdown): supervisor.BrutalKill (the default, as poolboy's), a positive
// timeout, or actor.Infinity. A Pool that dismisses an overflow worker
// waits for it that long.
func WorkerShutdown(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 && d != supervisor.BrutalKill {
			o.bad("WorkerShutdown(%v): want a positive timeout, BrutalKill or Infinity", d)
		}
		o.workerShutdown = d
	}
}

// Hooks sets the workers' supervisor's Hooks (supervisor.Spec.Hooks): to
// observe their exits.
func Hooks(h *supervisor.Hooks) Option { return func(o *options) { o.hooks = h } }

// Name registers the pool's manager (or the router) under name.
func Name(name string) Option {
	return func(o *options) {
		if name == "" {
			o.bad("Name(\"\"): want a name")
		}
		o.name = name
	}
}

func newOptions(start StartFunc, opts []Option) (options, error) {
	o := options{size: 5, workerShutdown: supervisor.BrutalKill}
	if start == nil {
		return o, fmt.Errorf("%w: nil StartFunc", ErrBadOption)
	}
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("%w: nil Option", ErrBadOption)
		}
		opt(&o)
	}
	return o, o.err
}

// handle is what a Pool and a Router share: the running manager's pid
// and the tree it runs in.
type handle struct {
	sys atomic.Pointer[actor.System]
	pid atomic.Pointer[actor.Pid] // the running manager; nil when none

	mu       sync.Mutex // guards the fields below
	running  bool
	embedded bool
	top      bool // started by Start: the manager's parent is the System
}

// current returns the running manager's pid (the zero Pid if none, which
// calls answer with ErrNoProc).
func (h *handle) current() actor.Pid {
	if p := h.pid.Load(); p != nil {
		return *p
	}
	return actor.Pid{}
}

// call calls the running manager; actor.ErrNoProc if none runs.
func call[T any](h *handle, c actor.Caller, req any, timeout time.Duration) (T, error) {
	pid := h.current()
	if pid.IsZero() {
		var zero T
		return zero, actor.ErrNoProc
	}
	return actor.Call[T](c, pid, req, timeout)
}

// claim marks h running, unless it runs.
func (h *handle) claim(sys *actor.System, embedded bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running {
		return ErrRunning
	}
	h.running, h.embedded, h.top = true, embedded, !embedded
	h.sys.Store(sys)
	return nil
}

// up publishes the manager c runs (from its Init), and arranges for its
// death to unpublish it and free h for a restart (a Hold closer runs in
// the death path, before the parent hears of it).
func (h *handle) up(c *actor.Context) error {
	self := c.Self()
	if _, err := c.System().Hold(self, closerFunc(func() {
		h.pid.CompareAndSwap(&self, nil) // &self is what is stored below: unless a later manager is published
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	})); err != nil {
		return err
	}
	h.pid.Store(&self)
	return nil
}

// failed frees h after a start that failed.
func (h *handle) failed() {
	h.mu.Lock()
	h.running = false
	h.mu.Unlock()
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// stop stops the manager started by Start: see Pool.Stop.
func (h *handle) stop(ctx context.Context) error {
	h.mu.Lock()
	embedded := h.embedded
	h.mu.Unlock()
	if embedded {
		return ErrEmbedded
	}
	sys, pid := h.sys.Load(), h.current()
	if sys == nil || pid.IsZero() {
		return nil
	}
	w, err := sys.Monitor(pid)
	if err != nil {
		if errors.Is(err, actor.ErrStopped) {
			return nil
		}
		return err
	}
	defer w.Stop()
	sys.Exit(pid, actor.Shutdown)
	select {
	case <-w.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startServer starts srv from outside (Start) or linked to c (ChildSpec).
func (h *handle) startServer(sys *actor.System, c *actor.Context, name string, srv actor.Server) (actor.Pid, error) {
	if err := h.claim(sys, c != nil); err != nil {
		return actor.Pid{}, err
	}
	var spawn []actor.SpawnOption
	if name != "" {
		spawn = append(spawn, actor.Name(name))
	}
	var pid actor.Pid
	var err error
	if c == nil {
		pid, err = actor.StartServer(sys, srv, actor.WithSpawn(spawn...))
	} else {
		pid, err = actor.SpawnServer(c, srv, actor.WithSpawn(spawn...))
	}
	if err != nil {
		h.failed()
	}
	return pid, err
}

// childSpec is the ChildSpec of a pool or router: a worker child of its
// parent, permanent, whose Shutdown is Infinity (it stops its workers'
// supervisor, which bounds each worker by WorkerShutdown).
func (h *handle) childSpec(id string, newServer func() actor.Server, name string) supervisor.ChildSpec {
	return supervisor.ChildSpec{ID: id, Shutdown: supervisor.Infinity,
		Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
			return h.startServer(c.System(), c, name, newServer())
		}}
}

// Pool is a poolboy-style worker pool: see the package doc. Make one with
// Start, or with New for ChildSpec. A *Pool is a handle: it may be shared,
// and its methods are safe for concurrent use.
type Pool struct {
	handle
	start StartFunc
	o     options
}

// Status is a snapshot of a Pool.
type Status struct {
	Size     int // the Size option
	Idle     int // workers free
	Busy     int // workers checked out
	Overflow int // workers running beyond Size
	Waiting  int // checkouts waiting (some may have given up since)
	Missing  int // workers to be restarted (their start failed; retried)
}

// New returns a Pool for ChildSpec. Errors: ErrBadOption.
func New(start StartFunc, opts ...Option) (*Pool, error) {
	o, err := newOptions(start, opts)
	if err != nil {
		return nil, err
	}
	if o.routerOnly != "" {
		return nil, fmt.Errorf("%w: %s is a Router option", ErrBadOption, o.routerOnly)
	}
	return &Pool{start: start, o: o}, nil
}

// Start starts a Pool in sys, from outside any tree, and returns once its
// Size workers run. Errors: those of New; a worker's start error (wrapped
// in an *actor.StartError); actor.ErrStopped after the System's Shutdown.
func Start(sys *actor.System, start StartFunc, opts ...Option) (*Pool, error) {
	if sys == nil {
		return nil, actor.ErrNilSystem
	}
	p, err := New(start, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := p.startServer(sys, nil, p.o.name, p.newManager()); err != nil {
		return nil, err
	}
	return p, nil
}

// ChildSpec returns the child spec that runs p in a supervision tree.
func (p *Pool) ChildSpec(id string) supervisor.ChildSpec {
	return p.childSpec(id, func() actor.Server { return p.newManager() }, p.o.name)
}

// Requests to the manager.
type (
	checkoutReq struct{ block bool }
	checkinMsg  struct{ w actor.Pid }
	statusReq   struct{}
)

// Checkout checks a worker out for the caller, waiting up to timeout for
// one (0: do not wait, as TryCheckout). Errors: ErrFull (timeout 0),
// ErrQueueFull, actor.ErrTimeout, actor.ErrNoProc (the pool does not run,
// or stopped meanwhile), a new overflow worker's start error.
func (p *Pool) Checkout(c actor.Caller, timeout time.Duration) (actor.Pid, error) {
	if timeout == 0 {
		return p.TryCheckout(c)
	}
	return call[actor.Pid](&p.handle, c, checkoutReq{block: true}, timeout)
}

// TryCheckout checks a worker out if one is free (or an overflow worker
// may start), and fails with ErrFull otherwise, at once.
func (p *Pool) TryCheckout(c actor.Caller) (actor.Pid, error) {
	return call[actor.Pid](&p.handle, c, checkoutReq{}, actor.Infinity)
}

// CheckoutContext is Checkout from plain Go code, waiting until ctx is done.
func (p *Pool) CheckoutContext(ctx context.Context, sys *actor.System) (actor.Pid, error) {
	pid := p.current()
	if pid.IsZero() {
		return actor.Pid{}, actor.ErrNoProc
	}
	return actor.CallContext[actor.Pid](ctx, sys, pid, checkoutReq{block: true})
}

// Checkin returns a worker checked out. It is a cast: it does not fail for
// a worker that is not checked out, which is left alone. Errors: those of
// a Send (actor.ErrStopped after Shutdown).
func (p *Pool) Checkin(s actor.Sender, w actor.Pid) error {
	pid := p.current()
	if pid.IsZero() {
		return actor.ErrNoProc
	}
	return actor.Cast(s, pid, checkinMsg{w})
}

// Transaction checks a worker out (as Checkout), runs f with it and checks
// it in, even if f panics; it returns f's error, or Checkout's.
func (p *Pool) Transaction(c actor.Caller, timeout time.Duration, f func(w actor.Pid) error) error {
	w, err := p.Checkout(c, timeout)
	if err != nil {
		return err
	}
	defer p.checkinFrom(c, w)
	return f(w)
}

// checkinFrom checks w in for c, a Caller that is also a Sender (the
// System and every Context are).
func (p *Pool) checkinFrom(c actor.Caller, w actor.Pid) {
	if s, ok := c.(actor.Sender); ok {
		p.Checkin(s, w)
	}
}

// Status returns a snapshot of the pool.
func (p *Pool) Status(c actor.Caller) (Status, error) {
	return call[Status](&p.handle, c, statusReq{}, 5*time.Second)
}

// Stop stops a Pool started with Start and returns once its manager and
// its workers have exited, or with ctx's error if ctx ends first (the stop
// goes on). A Pool already stopped (or whose System has shut down): nil.
// Errors: ErrEmbedded for a Pool run by ChildSpec.
func (p *Pool) Stop(ctx context.Context) error { return p.stop(ctx) }

// Pid returns the pid of the pool's manager while it runs (the zero Pid
// otherwise).
func (p *Pool) Pid() actor.Pid { return p.current() }

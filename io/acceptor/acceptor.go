package acceptor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/supervisor"
)

// Handler is a connection's behaviour: a gen_server whose Init is given the
// connection, once its actor owns the socket (see the package doc).
type Handler interface {
	// Init runs first, with the socket owned and passive. nil: run;
	// actor.ErrIgnore: stop quietly; any other error: stop with it.
	Init(c *actor.Context, cn *netio.Conn) error
	HandleCall(c *actor.Context, req actor.Request)
	HandleCast(c *actor.Context, msg any)
	// HandleInfo gets the socket's messages (netio.Data, netio.Closed,
	// netio.Error, netio.Drained, netio.Passive) and every other message.
	HandleInfo(c *actor.Context, msg any)
	// Terminate runs as a Server's does, and only if Init returned nil.
	Terminate(c *actor.Context, reason actor.Reason)
}

// Errors.
var (
	// ErrBadOption: New or Start given a nil newHandler or a bad option;
	// the error wraps it and says which.
	ErrBadOption = errors.New("acceptor: bad option")
	// ErrRunning: a Listener started while it already runs.
	ErrRunning = errors.New("acceptor: listener already running")
	// ErrEmbedded: Stop of a Listener that runs in another tree
	// (ChildSpec): stop that tree, or its child.
	ErrEmbedded = errors.New("acceptor: listener embedded in another tree")
	// ErrNilHandler: newHandler returned a nil Handler; the connection is
	// closed (and reported).
	ErrNilHandler = errors.New("acceptor: newHandler returned a nil Handler")
)

// Option configures a Listener.
type Option func(*options)

type options struct {
	acceptors    int
	maxConns     int // 0: no limit
	connShutdown time.Duration
	connsName    string
	active       *netio.Active
	err          error // the first bad option
}

func (o *options) bad(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
	}
}

// MaxAcceptors bounds Acceptors.
const MaxAcceptors = 1024

// Acceptors sets the number of acceptors (default 10, as ranch's), from 1
// to MaxAcceptors.
func Acceptors(n int) Option {
	return func(o *options) {
		if n < 1 || n > MaxAcceptors {
			o.bad("Acceptors(%d): want 1 to %d", n, MaxAcceptors)
		}
		o.acceptors = n
	}
}

// MaxConns bounds the connections accepted and not yet ended (see the
// package doc); n must be positive. Default: no limit.
func MaxConns(n int) Option {
	return func(o *options) {
		if n < 1 {
			o.bad("MaxConns(%d): want > 0 (leave it out for no limit)", n)
		}
		o.maxConns = n
	}
}

// ConnShutdown sets how a connection actor is stopped when the Listener
// stops (its child spec's Shutdown): a timeout it is given to stop
// (default 5 s; a Handler that traps exits runs Terminate meanwhile),
// supervisor.BrutalKill or actor.Infinity.
func ConnShutdown(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 && d != supervisor.BrutalKill {
			o.bad("ConnShutdown(%v): want a positive timeout, BrutalKill or Infinity", d)
		}
		o.connShutdown = d
	}
}

// ConnsName registers the connections' supervisor under name, for
// supervisor.WhichChildren and CountChildren.
func ConnsName(name string) Option {
	return func(o *options) {
		if name == "" {
			o.bad("ConnsName(\"\"): want a name")
		}
		o.connsName = name
	}
}

// Active sets each connection's delivery mode once its Handler's Init has
// returned nil (default: it stays as Init left it; passive, unless Init
// set it).
func Active(a netio.Active) Option { return func(o *options) { o.active = &a } }

// Listener is a TCP listener with its acceptors and connections: see the
// package doc. Make one with Start, or with New for ChildSpec.
type Listener struct {
	// Immutable after New.
	addr       string
	newHandler func() Handler
	o          options

	// Shared with the death paths (slot.Close, the closers of Hold):
	// atomics, so a closer never waits for a lock.
	used     atomic.Int64  // connections accepted and not yet ended
	accepted atomic.Uint64 // connections accepted, ever
	sys      atomic.Pointer[actor.System]
	lsock    atomic.Pointer[actor.Pid] // the listener actor, while it runs

	mu       sync.Mutex // guards the fields below
	running  bool       // a tree runs (from its start to its death)
	embedded bool       // started by ChildSpec, not Start
	top      actor.Pid  // Start's supervisor
	port     int        // the port first bound: a restart binds it again
	bound    *net.TCPAddr
	conns    actor.Pid
	accs     actor.Pid
}

// New returns a Listener for ChildSpec: one that listens on addr and runs
// a Handler from newHandler for each connection. Errors: ErrBadOption.
func New(addr string, newHandler func() Handler, opts ...Option) (*Listener, error) {
	l := &Listener{addr: addr, newHandler: newHandler,
		o: options{acceptors: 10, connShutdown: 5 * time.Second}}
	if newHandler == nil {
		return nil, fmt.Errorf("%w: nil newHandler", ErrBadOption)
	}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil Option", ErrBadOption)
		}
		opt(&l.o)
	}
	if l.o.err != nil {
		return nil, l.o.err
	}
	return l, nil
}

// Start starts a Listener in sys under a supervisor of its own, and
// returns once it listens (Addr says where) and its acceptors run. Errors:
// those of New, and the tree's start error (see the package doc).
func Start(sys *actor.System, addr string, newHandler func() Handler, opts ...Option) (*Listener, error) {
	if sys == nil {
		return nil, actor.ErrNilSystem
	}
	l, err := New(addr, newHandler, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := l.startTree(sys, false, func() (actor.Pid, error) {
		return supervisor.Start(sys, l.spec())
	}); err != nil {
		return nil, err
	}
	return l, nil
}

// ChildSpec returns the child spec that runs l in a supervision tree (a
// supervisor child, permanent, shutdown Infinity): the tree starts it in
// its turn and stops it in reverse order. Addr is set once it has started.
func (l *Listener) ChildSpec(id string) supervisor.ChildSpec {
	return supervisor.ChildSpec{ID: id, Type: supervisor.Supervisor, Shutdown: supervisor.Infinity,
		Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
			return l.startTree(c.System(), true, func() (actor.Pid, error) {
				return supervisor.StartLink(c, l.spec())
			})
		}}
}

// closerFunc is an io.Closer for System.Hold.
type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// startTree runs start (the tree's) unless a tree of l runs, and marks l
// running until the tree's death (a Hold on its supervisor).
func (l *Listener) startTree(sys *actor.System, embedded bool, start func() (actor.Pid, error)) (actor.Pid, error) {
	l.mu.Lock()
	if l.running {
		l.mu.Unlock()
		return actor.Pid{}, ErrRunning
	}
	l.running, l.embedded = true, embedded
	l.mu.Unlock()
	l.sys.Store(sys)
	pid, err := start()
	if err == nil {
		_, err = sys.Hold(pid, closerFunc(l.treeDown))
	}
	if err != nil {
		l.treeDown()
		return actor.Pid{}, err
	}
	if !embedded {
		l.mu.Lock()
		l.top = pid
		l.mu.Unlock()
	}
	return pid, nil
}

// treeDown runs in the death path of the tree's supervisor (a Hold
// closer), or when its start failed.
func (l *Listener) treeDown() {
	l.mu.Lock()
	l.running, l.bound, l.conns, l.accs = false, nil, actor.Pid{}, actor.Pid{}
	l.mu.Unlock()
}

// spec is the Listener's tree: see the package doc.
func (l *Listener) spec() supervisor.Spec {
	conns := supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Name: l.o.connsName,
		Children: []supervisor.ChildSpec{{ID: "conn", Start: supervisor.ServerStart(l.newConn),
			Restart: supervisor.Temporary, Shutdown: l.o.connShutdown}}}
	accs := supervisor.Spec{Strategy: supervisor.OneForOne, Intensity: 10, Period: 10 * time.Second}
	for i := range l.o.acceptors {
		accs.Children = append(accs.Children, supervisor.ChildSpec{ID: "acceptor" + strconv.Itoa(i),
			Start: supervisor.ServerStart(func(...any) actor.Server { return &acceptorServer{l: l} })})
	}
	nested := func(id string, spec supervisor.Spec, record func(actor.Pid)) supervisor.ChildSpec {
		ch := supervisor.Child(id, spec)
		ch.Start = func(c *actor.Context, _ ...any) (actor.Pid, error) {
			pid, err := supervisor.StartLink(c, spec)
			if err == nil {
				record(pid)
			}
			return pid, err
		}
		return ch
	}
	return supervisor.Spec{Strategy: supervisor.RestForOne, Intensity: 10, Period: 10 * time.Second,
		Children: []supervisor.ChildSpec{
			nested("conns", conns, func(p actor.Pid) { l.mu.Lock(); l.conns = p; l.mu.Unlock() }),
			{ID: "listener", Start: supervisor.ServerStart(func(...any) actor.Server { return &lsock{l: l} })},
			nested("acceptors", accs, func(p actor.Pid) { l.mu.Lock(); l.accs = p; l.mu.Unlock() }),
		}}
}

// Addr returns the address the Listener listens on, with the port it got
// (nil while it does not listen: before its start, after its stop, while
// its listener actor restarts).
func (l *Listener) Addr() *net.TCPAddr {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bound
}

// Conns returns the connections accepted and not yet ended (see the
// package doc, "The connection limit").
func (l *Listener) Conns() int { return int(l.used.Load()) }

// Accepted returns the connections accepted since New.
func (l *Listener) Accepted() uint64 { return l.accepted.Load() }

// Stop stops a Listener started with Start, as its supervisor stops it: the
// acceptors, then the listening socket, then every connection actor (each
// by ConnShutdown). It returns once the tree has exited, or ctx's error if
// ctx ends first (the stop goes on). Stopping a Listener already stopped
// (or whose System has shut down) is nil. Errors: ErrEmbedded for a
// Listener run by ChildSpec.
func (l *Listener) Stop(ctx context.Context) error {
	l.mu.Lock()
	top, embedded := l.top, l.embedded
	l.mu.Unlock()
	if embedded {
		return ErrEmbedded
	}
	sys := l.sys.Load()
	if sys == nil || top.IsZero() {
		return nil
	}
	w, err := sys.Monitor(top)
	if err != nil {
		if errors.Is(err, actor.ErrStopped) {
			return nil
		}
		return err
	}
	defer w.Stop()
	sys.Exit(top, actor.Shutdown)
	select {
	case <-w.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// String names the Listener for logs.
func (l *Listener) String() string {
	if a := l.Addr(); a != nil {
		return "acceptor.Listener(" + a.String() + ")"
	}
	return "acceptor.Listener(" + l.addr + ")"
}

// listenAddr is the address to bind: l.addr, with the port first bound
// once there is one (a restart after port 0 keeps its port).
func (l *Listener) listenAddr() string {
	l.mu.Lock()
	port := l.port
	l.mu.Unlock()
	if port == 0 {
		return l.addr
	}
	host, _, err := net.SplitHostPort(l.addr)
	if err != nil {
		return l.addr
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// isNil reports whether h is nil or a typed nil.
func isNil(h Handler) bool {
	if h == nil {
		return true
	}
	v := reflect.ValueOf(h)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

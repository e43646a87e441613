package dist

// Remote spawn: SPAWN_REQUEST and SPAWN_REPLY.
//
// Design note.
//
// Problem. A peer asks this node to start a process: Erlang's
// spawn(Node, M, F, A), spawn_link/4, spawn_monitor/4, spawn_opt/5 and
// spawn_request/5 (which erpc uses) all send SPAWN_REQUEST {29, ReqId,
// From, GroupLeader, {M, F, Arity}, Opts} with the argument list as the
// message, and wait for SPAWN_REPLY {31, ReqId, From, Flags, Result}:
// the new pid, or an error atom. No Erlang code runs on a Go node, so
// {M, F} must name something Go registered beforehand.
//
// Mapping. RegisterSpawn(name, f) makes f the behaviour a request for
// {M, F} starts when name is "M:F", or, for M = colony, when name is F:
// spawn(Node, colony, worker, Args) starts what RegisterSpawn("worker", f)
// registered, and spawn(Node, jobs, start, Args) what
// RegisterSpawn("jobs:start", f) did. f gets Args (decoded terms) and
// returns the actor; the request's arity must be len(Args).
//
// Answers, as OTP's spawn_request reports them to the requester's
// spawn/4 (which raises them as errors): an f that returns an error is
// badarg; an option list that is not a
// proper list, or a malformed option, is badopt; a full slab is
// system_limit. An {M, F} nothing is registered for is no error, as on an
// Erlang node, where the process starts and its call of the missing
// function raises undef: the answer is a pid, whose process exits at once
// with {undef, [{M, F, Args, []}]} (undefined, below), after its link and
// monitor are made. (notsup is never answered: OTP's spawn/4 then falls back
// to the old protocol, a call to net_kernel that this node does not
// answer.) Options: link and monitor (and {monitor, Opts}, whose Opts are
// ignored) are honoured; every other option (priority, fullsweep_after,
// message_queue_data, ...) concerns the BEAM's process and is accepted
// and ignored. The group leader is ignored: a Go actor does no Erlang IO.
//
// Order. OTP promises that the spawn reply reaches the requester before
// any signal of the new process, and its link or monitor exists from the
// process's birth. So the reply, the link half and the monitor are made by
// the new actor itself, in a wrapper's Init that runs before the
// behaviour's own Init or first message: nothing the behaviour sends can
// overtake the reply on the connection, and its death cannot come before
// its link.
//
// Outgoing (Node.Spawn, SpawnLink, SpawnMonitor, to another Colony node or
// an Erlang node whose M:F exists there): the request is recorded by its
// ReqId on the node and on the peer (whose end fails it with
// noconnection), and the caller waits (actor.Awaiter) for the reply. With
// the link option, the reply's link flag makes the requester's half on
// this side, on the reader goroutine, before anything the child sends is
// read. With the monitor option, OTP's ReqId is the monitor's reference:
// the requester's half is recorded in its actor before the request goes
// (System.AddSpawnMonitor), under the ref whose wire reference is the
// ReqId; the peer makes its half in the child's wrapper, and the reply's
// monitor flag completes the half here with the child's pid, on the reader
// goroutine, before anything about the child is read. So the Down of a
// child that dies at once carries its own reason, as in OTP, not noproc.
// A reply that finds its requester gone takes the peer's half back
// (DEMONITOR_P); a spawn that fails takes the requester's record back.

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// SpawnFunc makes the actor a remote spawn request starts, from the
// request's arguments (decoded terms). An error refuses the request
// (badarg).
type SpawnFunc func(args []any) (actor.Actor, error)

// ErrSpawnRegistered: RegisterSpawn of a name registered already.
var ErrSpawnRegistered = errors.New("dist: spawn name already registered")

// SpawnError is a remote spawn's refusal: Reason is the error atom the
// peer answered (badarg: the behaviour refused the arguments; badopt;
// system_limit; notsup: the peer does not take spawn requests). A name
// the peer has nothing registered for is no refusal: the pid comes back,
// and the process exits with {undef, [{M, F, Args, []}]}, as on an Erlang
// node.
type SpawnError struct {
	Node   actor.Atom
	Name   string
	Reason actor.Atom
}

func (e *SpawnError) Error() string {
	return fmt.Sprintf("dist: spawn of %s on %s: %s", e.Name, e.Node, e.Reason)
}

var (
	atomColony      = actor.Atom("colony")
	atomLink        = actor.Atom("link")
	atomMonitor     = actor.Atom("monitor")
	atomBadarg      = actor.Atom("badarg")
	atomBadopt      = actor.Atom("badopt")
	atomSystemLimit = actor.Atom("system_limit")
)

// Flags of SPAWN_REPLY.
const (
	spawnFlagLink    = 1
	spawnFlagMonitor = 2
)

// spawnTable is the node's registered behaviours and functions, and its
// outgoing requests.
type spawnTable struct {
	mu    sync.RWMutex // guards funcs and rpcs
	funcs map[string]SpawnFunc
	rpcs  map[string]RPCFunc // erpc.go
	reqs  refTable[*spawnReq]
}

// spawnReq is one outgoing spawn request waiting for its reply.
type spawnReq struct {
	n    *Node
	p    *peer
	ref  etf.Ref
	done actor.AwaitDone
	name string
	mon  *outMon // the monitor option's watcher and ref; target from the reply
}

// RegisterSpawn makes f the behaviour that peers start on this node by
// name: Erlang's spawn(Node, colony, name, Args) for a plain name, or
// spawn(Node, M, F, Args) for a name "M:F"; Node.Spawn from another
// Colony node. See the package's docs/distribution.md for what a peer can
// ask. Errors: ErrSpawnRegistered, ErrBadConfig for an empty name or a
// nil f.
func (n *Node) RegisterSpawn(name string, f SpawnFunc) error {
	if name == "" || f == nil {
		return fmt.Errorf("%w: RegisterSpawn needs a name and a func", ErrBadConfig)
	}
	t := &n.spawns
	t.mu.Lock()
	defer t.mu.Unlock()
	return registerLocked(&t.funcs, name, f)
}

// spawnFunc finds the behaviour for {m, f} (see RegisterSpawn).
func (n *Node) spawnFunc(m, f actor.Atom) SpawnFunc {
	t := &n.spawns
	t.mu.RLock()
	defer t.mu.RUnlock()
	sf, _ := lookupMF(t.funcs, m, f)
	return sf
}

// registerLocked puts f under name in *reg (made if nil) unless the name
// is taken (ErrSpawnRegistered): the rule of RegisterSpawn and
// RegisterRPC. Called with spawnTable.mu held for writing.
func registerLocked[F any](reg *map[string]F, name string, f F) error {
	if _, ok := (*reg)[name]; ok {
		return fmt.Errorf("%w: %q", ErrSpawnRegistered, name)
	}
	if *reg == nil {
		*reg = make(map[string]F)
	}
	(*reg)[name] = f
	return nil
}

// lookupMF finds what reg holds for {m, f}: under "M:F", or, for
// M = colony, under the plain name F. Called with spawnTable.mu held.
func lookupMF[F any](reg map[string]F, m, f actor.Atom) (F, bool) {
	if v, ok := reg[string(m)+":"+string(f)]; ok {
		return v, true
	}
	if m == atomColony {
		v, ok := reg[string(f)]
		return v, ok
	}
	var zero F
	return zero, false
}

// spawnMF is the {M, F} a registered name is asked for by.
func spawnMF(name string) (m, f actor.Atom) {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return actor.Atom(name[:i]), actor.Atom(name[i+1:])
	}
	return atomColony, actor.Atom(name)
}

// spawnIn answers a SPAWN_REQUEST (or SPAWN_REQUEST_TT). Called by the
// reader goroutine. A malformed request is a protocol error, as for any
// control message; a request this node cannot honour is answered with an
// error atom.
func (c *conn) spawnIn(ctl etf.Tuple, msg any, hasMsg bool) error {
	reqID, ok1 := ctl[1].(etf.Ref)
	from, ok2 := ctl[2].(actor.Pid)
	mfa, ok3 := ctl[4].(etf.Tuple)
	if !ok1 || !ok2 || !ok3 || len(mfa) != 3 || !hasMsg {
		return protoErr("malformed SPAWN_REQUEST")
	}
	m, ok1 := mfa[0].(actor.Atom)
	f, ok2 := mfa[1].(actor.Atom)
	arity, ok3 := mfa[2].(int)
	args, ok4 := msg.([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 || arity != len(args) {
		return protoErr("malformed SPAWN_REQUEST {M, F, Arity} or arguments")
	}
	refuse := func(reason actor.Atom) error {
		c.control(etf.Tuple{opSpawnReply, reqID, from, 0, reason})
		return nil
	}
	link, monitor, ok := spawnOpts(ctl[5])
	if !ok {
		return refuse(atomBadopt)
	}
	if m == atomErpc {
		if a := c.n.erpcActor(f, args); a != nil { // erpc.go
			return c.spawnWrapped(a, reqID, from, link, monitor, m, f, arity, refuse)
		}
	}
	sf := c.n.spawnFunc(m, f)
	if sf == nil {
		// As an Erlang node does for a function that does not exist: the
		// process is spawned, and dies of undef (see undefined).
		c.n.logf(levelInfo, "dist: %s asked to spawn %s:%s/%d, which is not registered (RegisterSpawn): the process exits with undef", c.p.name, m, f, arity)
		return c.spawnWrapped(undefined{m, f, args}, reqID, from, link, monitor, m, f, arity, refuse)
	}
	a, err := safeSpawnFunc(sf, args)
	if err != nil || a == nil {
		c.n.logf(levelInfo, "dist: %s asked to spawn %s:%s/%d: refused: %v", c.p.name, m, f, arity, err)
		return refuse(atomBadarg)
	}
	return c.spawnWrapped(a, reqID, from, link, monitor, m, f, arity, refuse)
}

// undefined is the process a spawn request for an {M, F} nothing is
// registered for starts: it exits at once with {undef, [{M, F, Args, []}]},
// the reason an Erlang node's process gets when its function does not exist
// (error_handler raises undef with the call as its stack). The requester
// gets its pid, and its link or monitor, made with the process, sees that
// reason; spawn_request's reply is ok, as from an Erlang node.
type undefined struct {
	m, f actor.Atom
	args []any
}

func (u undefined) Init(ctx *actor.Context) {
	ctx.Stop(etf.Tuple{atomUndef, []any{etf.Tuple{u.m, u.f, u.args, []any{}}}})
}

func (undefined) Receive(*actor.Context, any) {}

// spawnWrapped starts a for a request (see spawned).
func (c *conn) spawnWrapped(a actor.Actor, reqID etf.Ref, from actor.Pid, link, monitor bool, m, f actor.Atom, arity int, refuse func(actor.Atom) error) error {
	w := &spawned{inner: a, c: c, reqID: reqID, from: from, link: link, monitor: monitor}
	if _, err := c.n.sys.Spawn(w); err != nil {
		c.n.logf(levelWarn, "dist: spawn of %s:%s/%d for %s: %v", m, f, arity, c.p.name, err)
		if errors.Is(err, actor.ErrNilBehaviour) {
			return refuse(atomBadarg)
		}
		return refuse(atomSystemLimit)
	}
	return nil
}

// safeSpawnFunc runs a registered SpawnFunc; a panic in it refuses the
// request rather than end the reader goroutine.
func safeSpawnFunc(f SpawnFunc, args []any) (a actor.Actor, err error) {
	defer func() {
		if r := recover(); r != nil {
			a, err = nil, fmt.Errorf("dist: spawn func panicked: %v", r)
		}
	}()
	return f(args)
}

// spawnOpts reads a request's option list: link and monitor; ok is false
// for a list that is not a proper list or a malformed option.
func spawnOpts(v any) (link, monitor, ok bool) {
	opts, isList := v.([]any)
	if !isList {
		return false, false, false
	}
	for _, o := range opts {
		switch o := o.(type) {
		case actor.Atom:
			switch o {
			case atomLink:
				link = true
			case atomMonitor:
				monitor = true
			}
		case etf.Tuple:
			if len(o) == 0 {
				return false, false, false
			}
			if o[0] == atomMonitor {
				monitor = true
			}
		default:
			return false, false, false
		}
	}
	return link, monitor, true
}

// spawned wraps a remotely requested actor: its Init answers the request
// and makes the link and monitor asked for, before the behaviour runs (see
// the design note, "Order").
type spawned struct {
	inner         actor.Actor
	c             *conn
	reqID         etf.Ref
	from          actor.Pid
	link, monitor bool
}

func (s *spawned) Init(ctx *actor.Context) {
	self := ctx.Self()
	flags := 0
	if s.link {
		flags |= spawnFlagLink
		s.c.linkIn(s.from, self)
		select {
		case <-s.c.p.done:
			// The connection ended, maybe before the link was made: the
			// requester is gone, and a linked child dies with it.
			s.c = nil
			ctx.Stop(actor.NoConnection)
			return
		default:
		}
	}
	if s.monitor {
		flags |= spawnFlagMonitor
		s.c.monitorIn(s.from, self, s.reqID)
	}
	s.c.control(etf.Tuple{opSpawnReply, s.reqID, s.from, flags, self})
	s.c = nil
	if in, ok := s.inner.(actor.Initer); ok {
		in.Init(ctx)
	}
}

func (s *spawned) Receive(ctx *actor.Context, msg any) { s.inner.Receive(ctx, msg) }

// Spawn starts the behaviour registered as name (RegisterSpawn) on node
// with args, and returns its pid: a SPAWN_REQUEST, answered by the peer.
// from is the requester: a handler's *actor.Context (whose wait hands the
// scheduler role on) or the *actor.System. On an Erlang node, name "M:F"
// spawns M:F(Args...) there. Errors: a *SpawnError with the peer's
// reason, a *NodeDownError (ErrNoConnection) if node cannot be reached or
// goes down first; ErrStopped. A name on this node spawns locally.
func (n *Node) Spawn(from Caller, node actor.Atom, name string, args ...any) (actor.Pid, error) {
	return n.spawn(from, node, name, args, false)
}

// SpawnLink is Spawn linked to the calling actor (spawn_link/4): the link
// exists from the child's birth on both nodes.
func (n *Node) SpawnLink(c *actor.Context, node actor.Atom, name string, args ...any) (actor.Pid, error) {
	return n.spawn(c, node, name, args, true)
}

// SpawnMonitor is Spawn with a monitor of the child by the calling actor
// (spawn_monitor/4). The monitor exists from the child's birth: a child
// that dies at once is Down with its own reason (see the design note).
// A spawn that fails returns its error and leaves no monitor.
func (n *Node) SpawnMonitor(c *actor.Context, node actor.Atom, name string, args ...any) (actor.Pid, actor.Ref, error) {
	if node == n.name {
		return n.spawnLocalMonitor(c, name, args)
	}
	self := c.Self()
	ref, ok := n.sys.AddSpawnMonitor(self, node)
	if !ok {
		return actor.Pid{}, 0, actor.ErrNoProc
	}
	pid, err := n.spawnRemote(c, node, name, args, false, &outMon{watcher: self, ref: ref})
	if err != nil {
		n.sys.DropSpawnMonitor(self, ref)
		return actor.Pid{}, 0, err
	}
	return pid, ref, nil
}

func (n *Node) spawn(from Caller, node actor.Atom, name string, args []any, link bool) (actor.Pid, error) {
	if node == n.name {
		return n.spawnLocal(from, name, args, link)
	}
	return n.spawnRemote(from, node, name, args, link, nil)
}

// spawnRemote sends a spawn request to node and waits for its reply; mon,
// if not nil, asks for the monitor option (SpawnMonitor).
func (n *Node) spawnRemote(from Caller, node actor.Atom, name string, args []any, link bool, mon *outMon) (actor.Pid, error) {
	if args == nil {
		args = []any{}
	}
	v, err := from.Await(actor.Infinity, func(self actor.Pid, done actor.AwaitDone) (func(), error) {
		return n.startSpawn(self, node, name, args, link, mon, done)
	})
	if err != nil {
		return actor.Pid{}, err
	}
	return v.(actor.Pid), nil
}

// spawnLocal is Spawn of a name on this node.
func (n *Node) spawnLocal(from Caller, name string, args []any, link bool) (actor.Pid, error) {
	a, err := n.localBehaviour(name, args)
	if err != nil {
		return actor.Pid{}, err
	}
	if link {
		return from.(*actor.Context).SpawnLink(a)
	}
	return n.sys.Spawn(a)
}

// spawnLocalMonitor is SpawnMonitor of a name on this node.
func (n *Node) spawnLocalMonitor(c *actor.Context, name string, args []any) (actor.Pid, actor.Ref, error) {
	a, err := n.localBehaviour(name, args)
	if err != nil {
		return actor.Pid{}, 0, err
	}
	return c.SpawnMonitor(a)
}

// localBehaviour makes the behaviour registered as name from args, as a
// request from a peer would (badarg if there is none, or it refuses).
func (n *Node) localBehaviour(name string, args []any) (actor.Actor, error) {
	m, f := spawnMF(name)
	sf := n.spawnFunc(m, f)
	if sf == nil {
		return nil, &SpawnError{Node: n.name, Name: name, Reason: atomBadarg}
	}
	a, err := safeSpawnFunc(sf, args)
	if err != nil || a == nil {
		return nil, &SpawnError{Node: n.name, Name: name, Reason: atomBadarg}
	}
	return a, nil
}

// startSpawn sends the request and records it (see the design note).
func (n *Node) startSpawn(self actor.Pid, node actor.Atom, name string, args []any, link bool, mon *outMon, done actor.AwaitDone) (func(), error) {
	p, err := n.requestPeer(node)
	if err != nil {
		return nil, err
	}
	if self.IsZero() {
		self = n.kernel
	}
	r := &spawnReq{n: n, p: p, ref: n.MakeRef(), name: name, mon: mon}
	if mon != nil {
		r.ref = n.monitorRef(mon.ref) // OTP: the ReqId is the monitor's reference
	}
	r.done = func(v any, err error) bool {
		if e, ok := err.(*SpawnError); ok {
			e.Node, e.Name = node, name
		}
		return done(v, err)
	}
	n.spawns.reqs.add(r.ref, r)
	if !p.addSpawn(r) {
		n.spawns.reqs.take(r.ref)
		return nil, &NodeDownError{Node: node, Err: p.err}
	}
	opts := []any{}
	if link {
		opts = append(opts, atomLink)
	}
	if mon != nil {
		opts = append(opts, atomMonitor)
	}
	m, f := spawnMF(name)
	ctl := etf.Tuple{opSpawnRequest, r.ref, self, self, etf.Tuple{m, f, len(args)}, opts}
	if err := p.send(n.enc, control{tuple: ctl}, args, true); err != nil {
		n.spawns.reqs.take(r.ref)
		p.removeSpawn(r.ref)
		return nil, err
	}
	return func() {
		n.spawns.reqs.take(r.ref)
		p.removeSpawn(r.ref)
	}, nil
}

// spawnReplyIn is a SPAWN_REPLY (or SPAWN_REPLY_TT): {31, ReqId, To,
// Flags, Result}. Called by the reader goroutine.
func (c *conn) spawnReplyIn(ctl etf.Tuple) error {
	if len(ctl) < 5 {
		return protoErr("malformed SPAWN_REPLY")
	}
	ref, ok1 := ctl[1].(etf.Ref)
	to, ok2 := ctl[2].(actor.Pid)
	flags, ok3 := ctl[3].(int)
	if !ok1 || !ok2 || !ok3 {
		return protoErr("malformed SPAWN_REPLY")
	}
	child, isPid := ctl[4].(actor.Pid)
	if isPid && flags&spawnFlagLink != 0 {
		// The child is linked to to on the peer: the half here, before
		// anything the child sends is read (if to is gone, linkIn answers
		// noproc, which the child's link takes as to's death).
		c.linkIn(child, to)
	}
	r := c.n.spawns.reqs.take(ref)
	if isPid && flags&spawnFlagMonitor != 0 {
		c.spawnMonitorIn(r, ref, to, child)
	}
	if r == nil {
		return nil // the requester is gone (killed while it waited)
	}
	c.p.removeSpawn(ref)
	switch res := ctl[4].(type) {
	case actor.Pid:
		r.done(res, nil)
	case actor.Atom:
		r.done(nil, &SpawnError{Reason: res})
	default:
		r.done(nil, &SpawnError{Reason: atomBadarg})
	}
	return nil
}

// spawnMonitorIn completes the requester's half of a spawn's monitor with
// the child's pid (see the design note, Outgoing): from now on the
// monitor is the peer's tables' like any other, and its Down comes by
// MONITOR_P_EXIT or the connection's end. With the requester gone (r nil)
// the peer's half is taken back. On the reader goroutine, before anything
// after the reply is read.
func (c *conn) spawnMonitorIn(r *spawnReq, eref etf.Ref, to, child actor.Pid) {
	if r == nil || r.mon == nil {
		c.n.signal(c.p, etf.Tuple{opDemonitorP, to, child, eref})
		return
	}
	m := *r.mon
	m.target = child
	s := c.p.signals(c.n)
	s.out[eref] = &m
	s.mu.Unlock()
}

// addSpawn records r on the peer, so that the peer's end fails it; false
// if the peer has ended.
func (p *peer) addSpawn(r *spawnReq) bool {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if p.dead {
		return false
	}
	if p.spawns == nil {
		p.spawns = make(map[etf.Ref]*spawnReq)
	}
	p.spawns[r.ref] = r
	return true
}

func (p *peer) removeSpawn(ref etf.Ref) {
	p.qmu.Lock()
	delete(p.spawns, ref)
	p.qmu.Unlock()
}

// failSpawns fails the requests that waited on an ended peer (what end
// took from p.spawns) with a *NodeDownError.
func (p *peer) failSpawns(reqs map[etf.Ref]*spawnReq) {
	for ref, r := range reqs {
		if r.n.spawns.reqs.takeIf(ref, r) {
			r.done(nil, &NodeDownError{Node: p.name, Err: p.err})
		}
	}
}

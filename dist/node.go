package dist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/epmd"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
)

// The flags this node announces: every flag OTP 25 and 26 make mandatory,
// and the optional ones it implements (see docs/distribution.md). Not
// DIST_HDR_ATOM_CACHE: see wire.go.
const ourFlags = handshake.Mandatory | handshake.Mandatory25Digest |
	handshake.DistMonitor | handshake.DistMonitorName | handshake.UnicodeIO |
	handshake.SmallAtomTags | handshake.SendSender |
	handshake.BigSeqTraceLabels | handshake.Fragments | handshake.ExitPayload |
	handshake.Alias | handshake.Spawn

// testFlagsOff holds flags a test makes Start leave out of ourFlags (to
// check the wire a peer without them gets); zero outside tests.
var testFlagsOff atomic.Uint64

// ErrStopped: the node has stopped.
var ErrStopped = errors.New("dist: node stopped")

// ErrPang: Ping got no pong. The error wraps the reason (a failed
// connection, a refused handshake, ctx's error).
var ErrPang = errors.New("dist: pang")

// Node is a running distribution node: a System that is an Erlang node.
// Its methods may be called from any goroutine, handlers included (Ping
// blocks: in a handler, call it inside Context.Blocking). A Node is
// created by Start and must not be copied.
type Node struct {
	sys     *actor.System
	cfg     config
	name    actor.Atom
	etfNode etf.Node
	enc     *etf.Encoder // shared by every sender: it holds no state
	hs      handshake.Config
	kernel  actor.Pid // the net_kernel actor, which holds the node

	ln      net.Listener
	reg     *epmd.Registration // nil with EPMDNone
	epmdSrv *epmd.Server       // the registrar this node serves, or nil
	ctx     context.Context    // cancelled by close: dials and handshakes end
	cancel  context.CancelFunc
	wg      sync.WaitGroup // every goroutine of the node
	closed1 sync.Once
	stopped chan struct{} // closed by close

	gate        *gate // the incoming handshakes' slots (accept.go)
	acceptStats acceptStats
	refusalLog  refusalLog
	refSeq      atomic.Uint64
	fragSeq     atomic.Uint64
	stats       counters

	mu     sync.RWMutex // guards peers, closed, and each peer's dialing, accepting, c
	peers  map[actor.Atom]*peer
	closed bool

	pingMu sync.Mutex
	pings  map[etf.Ref]chan any

	aliasMu sync.RWMutex
	aliases map[etf.Ref]actor.Pid

	monMu    sync.Mutex
	monitors map[nodeSub]int // MonitorNodes and MonitorAllNodes subscribers, counted

	calls  refTable[*remoteCall] // outgoing gen_server calls (call.go)
	spawns spawnTable            // spawn behaviours and requests (spawn.go)

	cl cluster // the seed keepers (cluster.go)

	rex      actor.Pid // the rpc server (rex.go)
	bifStats bifStats  // statistics/1's last calls (bif.go)
}

type counters struct {
	sent, received, dropped     atomic.Uint64
	fragmentedIn, fragmentedOut atomic.Uint64
	oversized                   atomic.Uint64
	oversizedLogged             atomic.Int64 // when a refusal was last logged (oversize.go)
	nodeBudgetExceeded          atomic.Uint64
}

// Stats are a node's counters since Start.
type Stats struct {
	// Received counts messages delivered to local actors from peers;
	// Dropped those that found no live actor, name or alias (or a full
	// mailbox).
	Received, Dropped uint64
	// Sent counts messages queued for peers.
	Sent uint64
	// FragmentedIn and FragmentedOut count messages that came or went as
	// fragments (FRAGMENTS), each once whatever its number of fragments.
	FragmentedIn, FragmentedOut uint64

	// Handshakes is the number of incoming handshakes under way now (at
	// most Config.MaxHandshakes); Accepted counts the incoming connections
	// whose handshake completed.
	Handshakes int
	Accepted   uint64
	// Refused counts the incoming connections whose handshake did not
	// complete, by cause.
	Refused Refusals
	// RefusalsUnlogged counts the refusals that got no line of their own
	// (the log's rate bound); the summary lines say how many.
	RefusalsUnlogged uint64
	// Oversized counts messages from peers refused for passing
	// MaxMessage, their connection kept (oversize.go).
	Oversized uint64
	// NodeBudgetExceeded counts connections closed because their peer
	// introduced node identities past Config.NodeIdentityBurst and
	// NodeIdentityRate.
	NodeBudgetExceeded uint64
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	return Stats{
		Received: n.stats.received.Load(), Dropped: n.stats.dropped.Load(), Sent: n.stats.sent.Load(),
		FragmentedIn: n.stats.fragmentedIn.Load(), FragmentedOut: n.stats.fragmentedOut.Load(),
		Handshakes: n.gate.inUse(), Accepted: n.acceptStats.accepted.Load(),
		Refused: n.acceptStats.refusals(), RefusalsUnlogged: n.acceptStats.unlogged.Load(),
		Oversized: n.stats.oversized.Load(), NodeBudgetExceeded: n.stats.nodeBudgetExceeded.Load(),
	}
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// Start makes sys a distribution node named cfg.Name: it listens, registers
// with EPMD (cfg.EPMD), installs the route for sends to remote pids and
// spawns the node's net_kernel actor, registered as "net_kernel", which
// answers Erlang's net_adm:ping, and rex, the rpc server, registered as
// "rex" (rex.go; Start fails if the name is taken). The node stops with
// the net_kernel actor: with Stop,
// or with sys.Shutdown. A System can be a node once (its route is set
// once): Start on a System that was a node fails.
func Start(sys *actor.System, cfg Config) (*Node, error) {
	if sys == nil {
		return nil, fmt.Errorf("%w: nil System", ErrBadConfig)
	}
	c, err := cfg.check()
	if err != nil {
		return nil, err
	}
	n := &Node{
		sys: sys, cfg: c, name: actor.Atom(c.Name), stopped: make(chan struct{}),
		peers: make(map[actor.Atom]*peer), pings: make(map[etf.Ref]chan any),
		aliases: make(map[etf.Ref]actor.Pid), monitors: make(map[nodeSub]int),
		gate: newGate(c.MaxHandshakes), bifStats: bifStats{start: time.Now()},
	}
	n.refusalLog.window = time.Duration(refusalLogWindow.Load())
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if n.ln, err = net.Listen("tcp", c.ListenAddr); err != nil {
		n.cancel()
		return nil, fmt.Errorf("dist: listen: %w", err)
	}
	fail := func(err error) (*Node, error) {
		n.cancel()
		n.ln.Close()
		if n.reg != nil {
			n.reg.Close()
			<-n.reg.Done()
		}
		if n.epmdSrv != nil {
			n.epmdSrv.Close()
		}
		return nil, err
	}
	creation, err := n.register()
	if err != nil {
		return fail(err)
	}
	n.etfNode = etf.Node{Name: n.name, Creation: creation, Sys: sys}
	n.enc = &etf.Encoder{Node: n.etfNode}
	flags := ourFlags &^ handshake.Flags(testFlagsOff.Load())
	if !c.Hidden {
		flags |= handshake.Published
	}
	n.hs = handshake.Config{Name: c.Name, Creation: creation, Cookie: c.cookie, Flags: flags}
	if err := sys.SetRemote(n); err != nil {
		return fail(fmt.Errorf("dist: %w (a System can be a node once)", err))
	}
	n.kernel, err = sys.Spawn(&kernel{n: n}, actor.Name("net_kernel"))
	if err != nil {
		n.closeAll()
		return fail(fmt.Errorf("dist: spawn net_kernel: %w", err))
	}
	if _, err := sys.Hold(n.kernel, closerFunc(n.closeAll)); err != nil {
		n.closeAll()
		return fail(fmt.Errorf("dist: %w", err))
	}
	if n.rex, err = sys.Spawn(&rexServer{n: n}, actor.Name("rex")); err != nil {
		n.closeAll()
		n.sys.Exit(n.kernel, actor.Shutdown)
		return fail(fmt.Errorf("dist: spawn rex: %w", err))
	}
	n.goHelper(n.acceptLoop)
	if n.reg != nil {
		n.goHelper(n.watchEPMD)
	}
	n.startCluster()
	n.logf(levelInfo, "dist: node %s up (creation %d, listening on %s)", c.Name, creation, n.ln.Addr())
	return n, nil
}

// goHelper runs f on a goroutine the System counts (System.Helper), so
// that Shutdown returns only after it has.
func (n *Node) goHelper(f func()) {
	exited := n.sys.Helper()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer exited()
		f()
	}()
}

// Name is the node's name.
func (n *Node) Name() actor.Atom { return n.name }

// Creation is the node's creation (its incarnation, from EPMD).
func (n *Node) Creation() uint32 { return n.etfNode.Creation }

// Addr is the distribution listener's address.
func (n *Node) Addr() net.Addr { return n.ln.Addr() }

// System is the node's System.
func (n *Node) System() *actor.System { return n.sys }

// Encoder returns an encoder with the node's identity (local pids encode
// as this node's pids), for code that builds terms for the wire itself.
func (n *Node) Encoder() *etf.Encoder { return n.enc }

// Stop stops the node: its connections are closed (each reported down),
// it leaves EPMD, and its net_kernel actor exits. It waits, within ctx, for
// the node's goroutines. Stop is idempotent.
func (n *Node) Stop(ctx context.Context) error {
	n.closeAll()
	n.sys.Exit(n.kernel, actor.Shutdown)
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done is closed once the node has begun to stop.
func (n *Node) Done() <-chan struct{} { return n.stopped }

// closeAll is the node's closer (held by the net_kernel actor): it must
// not block. Everything it closes makes a goroutine of the node return.
func (n *Node) closeAll() {
	n.closed1.Do(func() {
		n.mu.Lock()
		n.closed = true
		peers := n.peers
		n.peers = nil
		n.mu.Unlock()
		close(n.stopped)
		n.cancel()
		n.ln.Close()
		for _, nc := range n.gate.close() { // after n.closed: accept.go, "The race"
			nc.Close()
		}
		n.refusalLog.close(n)
		if n.reg != nil {
			n.reg.Close()
		}
		if s := n.epmdSrv; s != nil {
			n.goHelper(func() { s.Close() })
		}
		for _, p := range peers {
			n.mu.Lock()
			c := p.c
			n.mu.Unlock()
			if c != nil {
				c.close(ErrStopped)
			} else {
				p.end(ErrStopped)
			}
		}
		n.logf(levelInfo, "dist: node %s stopped", n.name)
	})
}

// watchEPMD reports the loss of the EPMD registration (epmd died): the node
// runs on, reachable by peers that know its port, as an Erlang node does.
func (n *Node) watchEPMD() {
	select {
	case <-n.reg.Done():
		select {
		case <-n.stopped:
		default:
			n.logf(levelWarn, "dist: node %s lost its EPMD registration (epmd closed the connection)", n.name)
		}
	case <-n.stopped:
		<-n.reg.Done()
	}
}

// bound makes the node's stop and d end a blocking exchange on nc.
func (n *Node) bound(nc net.Conn, d time.Duration) (stop func() bool) {
	nc.SetDeadline(time.Now().Add(d))
	return context.AfterFunc(n.ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
}

// decide answers an incoming handshake's name (see handshake.Accept): the
// peer record the handshake will complete, and the status to send.
func (n *Node) decide(hp handshake.Peer) (*peer, handshake.Status) {
	name := actor.Atom(hp.Name)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || name == n.name {
		return nil, handshake.StatusNotAllowed
	}
	cur := n.peers[name]
	switch {
	case cur == nil:
		p := newPeer(name, n.cfg.MaxQueue)
		p.accepting = true
		n.peers[name] = p
		return p, handshake.StatusOK
	case cur.c != nil:
		// Up already: the peer says whether that connection is dead (it
		// restarted before we noticed). A new record replaces it.
		p := newPeer(name, n.cfg.MaxQueue)
		p.accepting = true
		return p, handshake.StatusAlive
	case cur.accepting:
		return nil, handshake.StatusNok
	case cur.dialing && name < n.name:
		return nil, handshake.StatusNok // our attempt wins
	default:
		// Our attempt loses (the greater name's wins) or has given up
		// waiting: this handshake completes the record.
		cur.accepting = true
		if cur.dialing {
			return cur, handshake.StatusOKSimultaneous
		}
		return cur, handshake.StatusOK
	}
}

// handshakeFailed undoes what decide or peerFor set up for p's handshake:
// a record that no handshake is completing any more ends.
func (n *Node) handshakeFailed(p *peer, dial bool) {
	if p == nil {
		return
	}
	n.mu.Lock()
	if dial {
		p.dialing = false
	} else {
		p.accepting = false
	}
	end := p.c == nil && !p.dialing && !p.accepting
	if end && n.peers[p.name] == p {
		delete(n.peers, p.name)
	}
	n.mu.Unlock()
	if end {
		p.end(fmt.Errorf("dist: no connection to %s", p.name))
	}
}

func (n *Node) logHandshake(name string, addr net.Addr, dir string, err error) {
	who := name
	if who == "" {
		who = "an unnamed peer"
	}
	if addr != nil {
		who += " (" + addr.String() + ")"
	}
	switch {
	case errors.Is(err, handshake.ErrCookie):
		n.logf(levelError, "dist: ** Connection attempt %s node %s rejected: invalid challenge reply (wrong cookie) **", dir, who)
	case errors.Is(err, handshake.ErrRefused):
		n.logf(levelDebug, "dist: handshake %s %s: %v", dir, who, err)
	case errors.Is(err, handshake.ErrFlags):
		n.logf(levelError, "dist: ** Connection attempt %s node %s rejected: %v **", dir, who, err)
	default:
		n.logf(levelWarn, "dist: handshake %s %s failed: %v", dir, who, err)
	}
}

// peerFor returns the peer record for name, creating it and starting a
// connection (Erlang's auto-connect) if there is none.
func (n *Node) peerFor(name actor.Atom) (*peer, error) {
	n.mu.RLock()
	p, closed := n.peers[name], n.closed
	n.mu.RUnlock()
	if p != nil {
		return p, nil
	}
	if closed {
		return nil, ErrStopped
	}
	if err := handshake.CheckName(string(name)); err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrStopped
	}
	if p = n.peers[name]; p == nil {
		p = newPeer(name, n.cfg.MaxQueue)
		p.dialing = true
		n.peers[name] = p
		n.goHelper(func() { n.dial(p) })
	}
	return p, nil
}

func (n *Node) dial(p *peer) {
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.HandshakeTimeout)
	defer cancel()
	nc, info, err := n.dialHandshake(ctx, p)
	n.logf(levelDebug, "dist: dial to %s: %v", p.name, err)
	if err == nil {
		n.attach(p, nc, info)
		return
	}
	if errors.Is(err, handshake.ErrRefused) {
		// nok: the peer's own attempt to us wins; its handshake completes
		// this record. Wait for it as long as the dial had left.
		select {
		case <-p.upc:
		case <-p.done:
		case <-ctx.Done():
		}
	} else {
		n.logHandshake(string(p.name), nil, "to", err)
	}
	n.handshakeFailed(p, true)
}

// dialHandshake looks name up in its host's EPMD, connects and runs the
// initiator's handshake, all within ctx.
func (n *Node) dialHandshake(ctx context.Context, p *peer) (net.Conn, handshake.Peer, error) {
	name := string(p.name)
	alive, host := splitName(name)
	info, err := epmd.Lookup(ctx, n.cfg.epmdAddr(host), alive)
	if err != nil {
		return nil, handshake.Peer{}, fmt.Errorf("epmd lookup of %s: %w", name, err)
	}
	if info.High < handshake.Version {
		return nil, handshake.Peer{}, fmt.Errorf("%s speaks distribution versions %d..%d, not 6", name, info.Low, info.High)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, fmt.Sprint(info.Port)))
	if err != nil {
		return nil, handshake.Peer{}, err
	}
	dl, _ := ctx.Deadline()
	stop := n.bound(nc, time.Until(dl))
	hp, err := handshake.Dial(nc, &n.hs, name, func() bool {
		// The peer has a connection to us: ours is stale only if no
		// handshake from the peer has completed or is completing p.
		n.mu.Lock()
		defer n.mu.Unlock()
		return p.c == nil && !p.accepting
	})
	stop()
	if err != nil {
		nc.Close()
		return nil, hp, err
	}
	nc.SetDeadline(time.Time{})
	return nc, hp, nil
}

func splitName(name string) (alive, host string) {
	for i := 0; i < len(name); i++ {
		if name[i] == '@' {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}

// attach makes a completed handshake's connection p's, starts its reader
// and writer, and flushes what was queued.
func (n *Node) attach(p *peer, nc net.Conn, info handshake.Peer) {
	c := newConn(n, p, nc, info)
	n.mu.Lock()
	cur := n.peers[p.name]
	var old *peer
	switch {
	case n.closed || p.c != nil:
		n.mu.Unlock()
		nc.Close()
		return
	case cur == p:
	case info.Replaces:
		old = cur // nil if it went down meanwhile
		n.peers[p.name] = p
	default: // the record ended meanwhile (Disconnect)
		n.mu.Unlock()
		nc.Close()
		return
	}
	p.c, p.dialing, p.accepting = c, false, false
	n.mu.Unlock()
	if old != nil {
		if old.c != nil {
			// Wait for the old connection's signals before this one's reader
			// starts: a LINK on the new connection must not be undone by
			// the old one's noconnection.
			old.c.shut(ErrDisconnected)
		} else {
			old.end(ErrDisconnected)
		}
	}
	// The connection's flags are what both ends announced.
	p.flip(encoder{node: n, flags: info.Flags & n.hs.Flags, seq: func() uint64 {
		n.stats.fragmentedOut.Add(1)
		return n.fragSeq.Add(1)
	}})
	close(p.upc)
	// NodeUp before the reader and writer start: either can end the
	// connection, and its NodeDown must follow its NodeUp.
	n.tellMonitors(NodeUp{Node: p.name, Hidden: !c.visible()}, !c.visible())
	n.goHelper(c.readLoop)
	n.goHelper(c.writeLoop)
	hidden := ""
	if !c.visible() {
		hidden = " (hidden)"
	}
	n.logf(levelInfo, "dist: connection to %s up%s", p.name, hidden)
}

// visible reports whether both ends published themselves.
func (c *conn) visible() bool {
	return c.info.Flags&handshake.Published != 0 && c.n.hs.Flags&handshake.Published != 0
}

// connDown removes a connection that ended and reports it.
func (n *Node) connDown(c *conn, reason error) {
	p := c.p
	n.mu.Lock()
	if n.peers[p.name] == p {
		delete(n.peers, p.name)
	}
	n.mu.Unlock()
	if !p.end(reason) {
		return
	}
	lvl := levelInfo
	if errors.Is(reason, ErrProtocol) {
		lvl = levelError
	}
	n.logf(lvl, "dist: connection to %s down: %v", p.name, reason)
	n.tellMonitors(NodeDown{Node: p.name, Reason: reason, Hidden: !c.visible()}, !c.visible())
	if f := n.cfg.OnNodeDown; f != nil {
		f(p.name, reason)
	}
}

// Nodes lists the visible nodes connected (Erlang's nodes()), sorted.
func (n *Node) Nodes() []actor.Atom { return n.list(true) }

// HiddenNodes lists the nodes connected through hidden connections
// (nodes(hidden)), sorted.
func (n *Node) HiddenNodes() []actor.Atom { return n.list(false) }

func (n *Node) list(visible bool) []actor.Atom {
	n.mu.RLock()
	var out []actor.Atom
	for name, p := range n.peers {
		if p.c != nil && p.c.visible() == visible {
			out = append(out, name)
		}
	}
	n.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Disconnect closes the connection to node (erlang:disconnect_node),
// reporting it down; false if there was none. When it returns, every link
// and monitor over the connection has fired (noconnection), and no message
// the connection carried is delivered after them.
func (n *Node) Disconnect(node actor.Atom) bool {
	n.mu.Lock()
	p := n.peers[node]
	if p != nil {
		delete(n.peers, node)
	}
	var c *conn
	if p != nil {
		c = p.c
	}
	n.mu.Unlock()
	switch {
	case p == nil:
		return false
	case c != nil:
		c.shut(ErrDisconnected)
	default:
		p.end(ErrDisconnected)
	}
	return true
}

// Connect connects to node if it is not connected (net_kernel:connect_node),
// waiting within ctx. nil once the connection is up.
func (n *Node) Connect(ctx context.Context, node actor.Atom) error {
	if node == n.name {
		return nil
	}
	p, err := n.peerFor(node)
	if err != nil {
		return err
	}
	select {
	case <-p.upc:
		return nil
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendRemote is the route for sends to remote pids (actor.Remote): the
// message goes to the pid's node as SEND_SENDER (or SEND), connecting
// first if need be. It never blocks. A message to a node that cannot be
// reached is dropped, as in Erlang; ErrBusy if the peer's queue is full.
func (n *Node) SendRemote(from, to actor.Pid, msg any) error {
	id, ok := to.Remote()
	if !ok {
		return fmt.Errorf("%w: not a remote pid", actor.ErrBadPid)
	}
	if id.Node == n.name {
		n.stats.dropped.Add(1) // a pid of an earlier incarnation of this node
		return nil
	}
	p, err := n.peerFor(id.Node)
	if err != nil {
		return err
	}
	if from.IsZero() {
		from = n.kernel
	}
	if err := p.send(n.enc, control{op: opSendSender, from: from, to: to}, castOut(msg), true); err != nil {
		return err
	}
	n.stats.sent.Add(1)
	return nil
}

// SendName sends msg to the actor registered as name on node ({name, node}
// ! msg), as REG_SEND, connecting first if need be. from is the sender (a
// local actor, or the zero Pid: the node's net_kernel then stands in). A
// node name that is this node's sends locally (errors as
// System.SendName's). It never blocks.
func (n *Node) SendName(from actor.Pid, name string, node actor.Atom, msg any) error {
	if node == n.name {
		return n.sys.SendName(name, msg)
	}
	p, err := n.peerFor(node)
	if err != nil {
		return err
	}
	if from.IsZero() {
		from = n.kernel
	}
	if err := p.send(n.enc, control{op: opRegSend, from: from, name: name}, msg, true); err != nil {
		return err
	}
	n.stats.sent.Add(1)
	return nil
}

// SendAlias sends msg to an alias (a reference an Erlang process made with
// alias/0, or one of this node's Alias), as ALIAS_SEND to the node that
// made it. A peer without ALIAS drops it, as OTP does.
func (n *Node) SendAlias(from actor.Pid, alias etf.Ref, msg any) error {
	if alias.Node == n.name {
		n.deliverAlias(alias, msg)
		return nil
	}
	p, err := n.peerFor(alias.Node)
	if err != nil {
		return err
	}
	if from.IsZero() {
		from = n.kernel
	}
	if err := p.send(n.enc, control{op: opAliasSend, from: from, alias: alias}, msg, true); err != nil {
		return err
	}
	n.stats.sent.Add(1)
	return nil
}

// MakeRef returns a new reference of this node (make_ref/0).
func (n *Node) MakeRef() etf.Ref {
	v := n.refSeq.Add(1)
	return etf.Ref{Node: n.name, Creation: n.etfNode.Creation, Len: 3,
		Words: [5]uint32{uint32(v) & 0x3ffff, uint32(v >> 18), uint32(v >> 50)}}
}

// Alias makes an alias for the local actor pid: a reference that peers
// send to (ALIAS_SEND) and that delivers to pid until Unalias.
func (n *Node) Alias(pid actor.Pid) etf.Ref {
	ref := n.MakeRef()
	n.aliasMu.Lock()
	n.aliases[ref] = pid
	n.aliasMu.Unlock()
	return ref
}

// Unalias deactivates an alias; false if it was not active.
func (n *Node) Unalias(ref etf.Ref) bool {
	n.aliasMu.Lock()
	defer n.aliasMu.Unlock()
	_, ok := n.aliases[ref]
	delete(n.aliases, ref)
	return ok
}

// deliver hands an incoming message to a local pid; a pid that is not this
// node's (another node's, or an earlier incarnation's) is dropped.
func (n *Node) deliver(to actor.Pid, msg any) {
	if _, _, ok := n.sys.LocalParts(to); !ok {
		n.stats.dropped.Add(1)
		return
	}
	if n.genMsg(to, msg) || n.callReply(msg) { // call.go
		return
	}
	if err := n.sys.Send(to, msg); err != nil {
		n.stats.dropped.Add(1)
		return
	}
	n.stats.received.Add(1)
}

func (n *Node) deliverName(name actor.Atom, msg any) {
	if n.genMsgName(name, msg) { // call.go
		return
	}
	if err := n.sys.SendName(string(name), msg); err != nil {
		n.stats.dropped.Add(1)
		return
	}
	n.stats.received.Add(1)
}

func (n *Node) deliverAlias(alias etf.Ref, msg any) {
	if n.aliasReply(alias, msg) { // a call's reply (call.go)
		return
	}
	n.aliasMu.RLock()
	pid, ok := n.aliases[alias]
	n.aliasMu.RUnlock()
	if !ok {
		n.stats.dropped.Add(1)
		return
	}
	n.deliver(pid, msg)
}

// NodeUp and NodeDown are what MonitorNodes and MonitorAllNodes deliver
// (net_kernel's {nodeup, Node} and {nodedown, Node}; with {node_type,
// all}, {nodeup, Node, [{node_type, visible | hidden}]}). Hidden is true
// for a hidden connection (either end hidden), which only MonitorAllNodes
// reports. MonitorNode's NodeDown has Hidden false.
type (
	NodeUp struct {
		Node   actor.Atom
		Hidden bool
	}
	NodeDown struct {
		Node   actor.Atom
		Reason error
		Hidden bool
	}
)

// nodeSub is a subscriber of node events: all for MonitorAllNodes.
type nodeSub struct {
	pid actor.Pid
	all bool
}

// MonitorNodes subscribes pid to NodeUp and NodeDown messages for every
// visible connection, as net_kernel:monitor_nodes(true) does: a hidden
// connection (Nodes, HiddenNodes) is not reported. Each call adds one
// subscription, and stop removes it. Messages are delivered past pid's
// mailbox bound (System.Deliver), as Down messages are.
func (n *Node) MonitorNodes(pid actor.Pid) (stop func()) {
	return n.monitorNodes(nodeSub{pid: pid})
}

// MonitorAllNodes is MonitorNodes for visible and hidden connections
// alike, as net_kernel:monitor_nodes(true, [{node_type, all}]); the
// messages' Hidden field tells which.
func (n *Node) MonitorAllNodes(pid actor.Pid) (stop func()) {
	return n.monitorNodes(nodeSub{pid: pid, all: true})
}

func (n *Node) monitorNodes(sub nodeSub) (stop func()) {
	n.monMu.Lock()
	n.monitors[sub]++
	n.monMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			n.monMu.Lock()
			if n.monitors[sub]--; n.monitors[sub] <= 0 {
				delete(n.monitors, sub)
			}
			n.monMu.Unlock()
		})
	}
}

// tellMonitors delivers a NodeUp or NodeDown to its subscribers: a hidden
// connection's to MonitorAllNodes' only.
func (n *Node) tellMonitors(msg any, hidden bool) {
	n.monMu.Lock()
	defer n.monMu.Unlock()
	for sub, k := range n.monitors {
		if hidden && !sub.all {
			continue
		}
		for range k {
			if n.sys.Deliver(sub.pid, msg) != nil {
				delete(n.monitors, sub) // dead
				break
			}
		}
	}
}

// Log levels of the node's lines.
const (
	levelDebug = slog.LevelDebug
	levelInfo  = slog.LevelInfo
	levelWarn  = slog.LevelWarn
	levelError = slog.LevelError
)

// logEnabled says whether a line at lvl would be written.
func (n *Node) logEnabled(lvl slog.Level) bool {
	if l := n.cfg.Logger; l != nil {
		return l.Enabled(context.Background(), lvl)
	}
	return lvl >= levelWarn
}

func (n *Node) logf(lvl slog.Level, format string, args ...any) {
	if l := n.cfg.Logger; l != nil {
		if l.Enabled(context.Background(), lvl) {
			l.Log(context.Background(), lvl, fmt.Sprintf(format, args...), slog.String("node", string(n.name)))
		}
		return
	}
	if lvl >= levelWarn {
		n.sys.Report(actor.Report{Kind: actor.OtherReport, Context: "dist", Text: fmt.Sprintf(format, args...)})
	}
}

package dist

// Links, exits and monitors across nodes: the route's half of
// actor/remote_signal.go.
//
// Problem. A link or monitor between a local actor and a process of a peer
// is two records on two nodes that only signals keep consistent, and the
// signals cross: a link and an unlink, sent at once from the two ends, must
// leave both ends agreeing (linked or not); an exit must be acted on once;
// a monitor must give exactly one Down, whether the target dies, does not
// exist, or its connection is lost; and the loss of a connection must fire
// every link and monitor over it, once, racing everything else.
//
// Protocol (links). OTP 26's link protocol (erts guide "Distribution
// Protocol", "Link Protocol"), which both ends of a connection speak: each
// end keeps, per linked pair, a state that is active or "unlinking with
// id". Sending LINK makes it active (dropping a pending unlink); a LINK
// received is ignored if there is any state (active, or an unlink of ours
// under way: the peer will get our UNLINK_ID after its LINK, and both end
// unlinked); UNLINK_ID is sent only from active, and makes it unlinking
// with a fresh id; an UNLINK_ID received removes an active state and
// leaves an unlinking one, and is always answered UNLINK_ID_ACK; an
// UNLINK_ID_ACK removes the state only if it is unlinking with that id; an
// EXIT is acted on only from active, and removes the state. Here the state
// of a pair is peerSignals.links (0: active, else the pending id), and the
// local actor's half (its monitor.Node, actor.AddRemoteLink) exists exactly
// while the state is active and the actor lives. The half is the arbiter
// of the exit signal: actor.RemoteLinkExit removes it and signals in one
// step, so an EXIT, the loss of the connection, a local Unlink and the
// actor's own death decide there which comes first, and one has effect.
//
// Protocol (monitors). A monitor a local actor holds on a peer's process
// is an entry of peerSignals.out under its wire reference; whoever removes
// it (MONITOR_P_EXIT, the loss of the connection, Demonitor) fires it or
// not, so it gives at most one Down, and every path removes it. A monitor
// a peer's process holds on a local actor is a record on the actor
// (actor.AddRemoteMonitor) and an entry of peerSignals.in: the actor's
// death sends MONITOR_P_EXIT for the entry, DEMONITOR_P removes both, the
// loss of the connection removes the record.
//
// The lock. peerSignals.mu guards one peer's tables, and is held while a
// state changes together with the actor's record and the signal that says
// so is queued, so that the wire carries a pair's signals in the order of
// its state changes (the protocol needs it: the ack of an UNLINK_ID must
// precede the acker's later signals to the sender). Lock order: mu, then
// the actor's monitor.Node lock (AddRemoteLink, RemoveRemoteLink,
// AddRemoteMonitor, RemoveRemoteMonitor), then the peer's qmu. Nothing
// that can run a finaliser (RemoteLinkExit, RemoteExit, whose kills call
// back into this file through LinkExitRemote and MonitorExitRemote) is
// called with mu held; the Downs and exits are decided under mu and
// delivered after it.
//
// A connection's end. The peer record is the connection (peer.go: never
// reused), so its tables are the signals over that one connection.
// peer.end calls down once: it marks the tables dead, so that no signal is
// recorded on them after, and fires what they held with reason
// noconnection. A link or monitor placed on a peer that has ended fires at
// once. Messages of a later connection to the same node go through a new
// peer with empty tables, as in OTP, where a lost connection takes its
// links and monitors with it.
//
// A peer's LINK cannot arrive over a new connection before the old
// connection's end has fired: attach waits for the old connection's reader
// to stop and fire its end (conn.shut) before it starts the new one's
// reader, as OTP cleans the old connection up before it accepts the new
// one. Otherwise the LINK would find the old link's half still there, and
// the old connection's noconnection would then remove it while the peer
// believes in the link.

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// peerSignals is the link and monitor state of one peer record. The zero
// value is ready (and holds nothing); node is set by the first use.
type peerSignals struct {
	mu       sync.Mutex
	n        *Node // set at first use; nil: nothing was ever recorded
	dead     bool  // the peer ended: nothing is recorded any more
	links    map[linkKey]uint64
	nextID   uint64 // the last UNLINK_ID id sent
	out      map[etf.Ref]*outMon
	in       map[etf.Ref]inMon
	inLocal  map[actor.Ref]etf.Ref
	nodeMons map[actor.Pid]int // monitor_node subscribers (monitor.go)
}

// linkKey names a linked pair: a local actor and a process of the peer.
type linkKey struct{ local, remote actor.Pid }

// outMon is a monitor held on a process (or name) of the peer: by a local
// actor (watcher, ref) or by Go code (down).
type outMon struct {
	watcher actor.Pid
	ref     actor.Ref
	target  actor.Pid  // the zero Pid for a monitor by name
	name    actor.Atom // for a monitor by name
	down    func(actor.Reason)
}

// inMon is a monitor a process of the peer holds on a local actor.
type inMon struct {
	target, watcher actor.Pid
	ref             actor.Ref  // the record's ref on target
	name            actor.Atom // set if the peer monitored the name
}

// signals returns p's tables locked, set up for n. The caller unlocks.
func (p *peer) signals(n *Node) *peerSignals {
	s := &p.sig
	s.mu.Lock()
	if s.n == nil {
		s.n = n
		s.links = make(map[linkKey]uint64)
		s.out = make(map[etf.Ref]*outMon)
		s.in = make(map[etf.Ref]inMon)
		s.inLocal = make(map[actor.Ref]etf.Ref)
		s.nodeMons = make(map[actor.Pid]int)
	}
	return s
}

// signal queues a control message of the link and monitor protocol for p,
// past the queue's bounds. Called with p.sig.mu held, so that the wire
// carries a pair's signals in the order of its state changes.
func (n *Node) signal(p *peer, ctl etf.Tuple) {
	if err := p.send(n.enc, control{tuple: ctl, signal: true}, nil, false); err != nil {
		n.logf(levelWarn, "dist: signal %v to %s: %v", ctl[0], p.name, err)
	}
}

// livePeer returns the peer record of node if there is one, without
// connecting.
func (n *Node) livePeer(node actor.Atom) *peer {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.peers[node]
}

// liveSignalsOf returns the peer record of the remote pid's node, if
// there is one (without connecting), and its tables, locked; nil, nil
// (nothing locked) if pid is not remote or its node has no peer record.
func (n *Node) liveSignalsOf(pid actor.Pid) (*peer, *peerSignals) {
	id, ok := pid.Remote()
	if !ok {
		return nil, nil
	}
	p := n.livePeer(id.Node)
	if p == nil {
		return nil, nil
	}
	return p, p.signals(n)
}

// down is the end of the peer node, which ended with reason, for its
// signals: it marks the tables dead and fires everything they held with
// noconnection. Called once, by peer.end.
func (s *peerSignals) down(node actor.Atom, reason error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return
	}
	s.dead = true
	n, links, out, in, nodeMons := s.n, s.links, s.out, s.in, s.nodeMons
	s.links, s.out, s.in, s.inLocal, s.nodeMons = nil, nil, nil, nil, nil
	s.mu.Unlock()
	if n == nil {
		return
	}
	for _, m := range in {
		n.sys.RemoveRemoteMonitor(m.target, m.ref)
	}
	for k, st := range links {
		if st == 0 {
			n.sys.RemoteLinkExit(k.remote, k.local, actor.NoConnection)
		}
	}
	for _, m := range out {
		n.fireDown(m, actor.NoConnection)
	}
	n.nodeDown(node, reason, nodeMons)
}

// fireDown gives a monitor of the peer's process its Down. The monitor has
// been removed from out by the caller.
func (n *Node) fireDown(m *outMon, reason actor.Reason) {
	if m.down != nil {
		m.down(reason)
		return
	}
	d := actor.Down{Ref: m.ref, Pid: m.target, Reason: reason}
	if m.name != "" {
		id, _ := m.target.Remote()
		d.Pid, d.Name, d.Node = actor.Pid{}, string(m.name), id.Node
	}
	n.sys.RemoteDown(m.watcher, d)
}

// peerOf returns the peer record for the remote pid's node, connecting if
// need be, and its tables, locked; ok false (nothing locked) if the node
// cannot be reached (a stopped node, a name no node can have, a peer that
// has ended).
func (n *Node) peerOf(node actor.Atom) (*peer, *peerSignals, bool) {
	p, err := n.peerFor(node)
	if err != nil {
		return nil, nil, false
	}
	s := p.signals(n)
	if s.dead {
		s.mu.Unlock()
		return nil, nil, false
	}
	return p, s, true
}

// LinkRemote is actor.RemoteSignals': the local actor from links to the
// remote pid to (LINK), connecting to its node if need be.
func (n *Node) LinkRemote(from, to actor.Pid) {
	id, ok := to.Remote()
	if !ok {
		return
	}
	if id.Node == n.name { // a pid of an earlier incarnation: no such process
		if n.sys.AddRemoteLink(from, to) {
			n.sys.RemoteLinkExit(to, from, atomNoproc)
		}
		return
	}
	p, s, ok := n.peerOf(id.Node)
	if !ok {
		if n.sys.AddRemoteLink(from, to) {
			n.sys.RemoteLinkExit(to, from, actor.NoConnection)
		}
		return
	}
	k := linkKey{from, to}
	st, had := s.links[k]
	switch {
	case had && st == 0:
		// Linked already: link/1 of an existing link does nothing.
	case !had && n.sys.HasRemoteLink(from, to):
		// A half of a link over an earlier connection to the node, whose
		// noconnection is on its way: as for a local link whose exit
		// signal is in flight, linking again does nothing.
	case n.sys.AddRemoteLink(from, to):
		s.links[k] = 0
		n.signal(p, etf.Tuple{opLink, from, to})
	}
	s.mu.Unlock()
}

// UnlinkRemote is actor.RemoteSignals': the local actor from unlinks the
// remote pid to (UNLINK_ID). Once it returns, no exit signal of the link
// reaches from: the half is gone, and RemoteLinkExit finds nothing.
func (n *Node) UnlinkRemote(from, to actor.Pid) {
	if !to.IsRemote() {
		return
	}
	p, s := n.liveSignalsOf(to)
	if s == nil {
		n.sys.RemoveRemoteLink(from, to) // a half whose connection has ended
		return
	}
	k := linkKey{from, to}
	st, had := s.links[k]
	if n.sys.RemoveRemoteLink(from, to) && had && st == 0 && !s.dead {
		s.nextID++
		s.links[k] = s.nextID
		n.signal(p, etf.Tuple{opUnlinkID, int(s.nextID), from, to})
	}
	s.mu.Unlock()
}

// LinkExitRemote is actor.RemoteSignals': the local actor from died with
// reason, linked to the remote pid to (EXIT).
func (n *Node) LinkExitRemote(from, to actor.Pid, reason actor.Reason) {
	p, s := n.liveSignalsOf(to)
	if s == nil {
		return
	}
	k := linkKey{from, to}
	if st, had := s.links[k]; had {
		delete(s.links, k)
		if st == 0 && !s.dead {
			n.signal(p, etf.Tuple{opExit, from, to, n.wireReason(reason)})
		}
	}
	s.mu.Unlock()
}

// ExitRemote is actor.RemoteSignals': erlang:exit(To, Reason) to the remote
// pid to (EXIT2), connecting to its node if need be; from is a local actor
// or the zero Pid (the node's net_kernel then stands in). A node that
// cannot be reached drops it, as OTP does.
func (n *Node) ExitRemote(from, to actor.Pid, reason actor.Reason) error {
	id, ok := to.Remote()
	if !ok {
		return fmt.Errorf("%w: not a remote pid", actor.ErrBadPid)
	}
	if id.Node == n.name {
		return nil // an earlier incarnation's pid: no such process
	}
	if from.IsZero() {
		from = n.kernel
	}
	p, s, ok := n.peerOf(id.Node)
	if !ok {
		return nil
	}
	n.signal(p, etf.Tuple{opExit2, from, to, n.wireReason(reason)})
	s.mu.Unlock()
	return nil
}

// NodeName is actor.RemoteSignals': this node's name.
func (n *Node) NodeName() actor.Atom { return n.name }

// wireReason is an exit reason as a term: atoms and terms as they are,
// ShutdownWith as {shutdown, R}, a Panic as {panic, Value, Stack}, an
// error as its text (a binary), and any other value that has no term
// form as its %v text.
func (n *Node) wireReason(r actor.Reason) any {
	switch v := r.(type) {
	case nil:
		return actor.Normal
	case actor.Atom:
		return v
	case actor.ShutdownWith:
		return etf.Tuple{actor.Shutdown, n.wireReason(v.Reason)}
	case actor.Panic:
		return etf.Tuple{actor.Atom("panic"), n.wireReason(v.Value), v.Stack}
	}
	if _, err := n.enc.Append(nil, r); err == nil {
		return r
	}
	if err, ok := r.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(r)
}

// localReason is a reason from the wire as an actor.Reason: {shutdown, R}
// is actor.ShutdownWith{R}; anything else is the decoded term.
func localReason(v any) actor.Reason {
	if t, ok := v.(etf.Tuple); ok && len(t) == 2 && t[0] == actor.Shutdown {
		return actor.ShutdownWith{Reason: t[1]}
	}
	return v
}

// Incoming link signals, from c's reader goroutine.

// linkIn is a LINK from the peer's process from to the local to.
func (c *conn) linkIn(from, to actor.Pid) {
	n := c.n
	s := c.p.signals(n)
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	k := linkKey{to, from}
	if _, had := s.links[k]; had {
		return // active, or our unlink is under way: ignored
	}
	if n.sys.AddRemoteLink(to, from) {
		s.links[k] = 0
		return
	}
	n.signal(c.p, etf.Tuple{opExit, to, from, atomNoproc})
}

// unlinkIn is an UNLINK_ID (id is the peer's) or, with no id, an old UNLINK.
func (c *conn) unlinkIn(id any, from, to actor.Pid) {
	n := c.n
	s := c.p.signals(n)
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	k := linkKey{to, from}
	if st, had := s.links[k]; had && st == 0 {
		delete(s.links, k)
		n.sys.RemoveRemoteLink(to, from)
	}
	if id != nil {
		n.signal(c.p, etf.Tuple{opUnlinkIDAck, id, to, from})
	}
}

// unlinkAckIn is an UNLINK_ID_ACK for our UNLINK_ID id.
func (c *conn) unlinkAckIn(id any, from, to actor.Pid) {
	s := c.p.signals(c.n)
	defer s.mu.Unlock()
	k := linkKey{to, from}
	if st, had := s.links[k]; had && st != 0 {
		if v, ok := id.(int); ok && v >= 0 && uint64(v) == st {
			delete(s.links, k)
		}
	}
}

// exitIn is an EXIT (link) or EXIT2 from the peer's process from to the
// local to.
func (c *conn) exitIn(link bool, from, to actor.Pid, reason any) {
	n := c.n
	r := localReason(reason)
	if !link {
		n.sys.RemoteExit(from, to, r)
		return
	}
	s := c.p.signals(n)
	k := linkKey{to, from}
	st, had := s.links[k]
	if had {
		delete(s.links, k)
	}
	s.mu.Unlock()
	if had && st == 0 {
		n.sys.RemoteLinkExit(from, to, r)
	}
}

// signalIn dispatches the link, exit and monitor control messages (see
// dispatch; its arity check has run for each of these operations). msg is
// the reason of the PAYLOAD_ variants.
func (c *conn) signalIn(op int, ctl etf.Tuple, msg any, hasMsg bool) error {
	pids := func(i, j int) (actor.Pid, actor.Pid, bool) {
		a, ok1 := ctl[i].(actor.Pid)
		b, ok2 := ctl[j].(actor.Pid)
		return a, b, ok1 && ok2
	}
	switch op {
	case opLink:
		from, to, ok := pids(1, 2)
		if !ok {
			return protoErr("malformed LINK")
		}
		c.linkIn(from, to)
	case opUnlink:
		from, to, ok := pids(1, 2)
		if !ok {
			return protoErr("malformed UNLINK")
		}
		c.unlinkIn(nil, from, to)
	case opUnlinkID, opUnlinkIDAck:
		from, to, ok := pids(2, 3)
		if !ok || !isUnlinkID(ctl[1]) {
			return protoErr("malformed UNLINK_ID or UNLINK_ID_ACK")
		}
		if op == opUnlinkID {
			c.unlinkIn(ctl[1], from, to)
		} else {
			c.unlinkAckIn(ctl[1], from, to)
		}
	case opExit, opExitTT, opExit2, opExit2TT:
		from, to, ok := pids(1, 2)
		if !ok {
			return protoErr("malformed EXIT or EXIT2")
		}
		c.exitIn(op == opExit || op == opExitTT, from, to, ctl[len(ctl)-1]) // _TT: the token before it
	case opPayloadExit, opPayloadExitTT, opPayloadExit2, opPayloadExit2TT:
		from, to, ok := pids(1, 2)
		if !ok || !hasMsg {
			return protoErr("malformed PAYLOAD_EXIT or PAYLOAD_EXIT2")
		}
		c.exitIn(op == opPayloadExit || op == opPayloadExitTT, from, to, msg)
	case opMonitorP:
		from, ok1 := ctl[1].(actor.Pid)
		ref, ok2 := ctl[3].(etf.Ref)
		_, isPid := ctl[2].(actor.Pid)
		_, isName := ctl[2].(actor.Atom)
		if !ok1 || !ok2 || !isPid && !isName {
			return protoErr("malformed MONITOR_P")
		}
		c.monitorIn(from, ctl[2], ref)
	case opDemonitorP:
		ref, ok := ctl[3].(etf.Ref)
		if !ok {
			return protoErr("malformed DEMONITOR_P")
		}
		c.demonitorIn(ref)
	case opMonitorPExit, opPayloadMonitorExt:
		to, ok1 := ctl[2].(actor.Pid)
		ref, ok2 := ctl[3].(etf.Ref)
		reason := msg
		if op == opMonitorPExit {
			reason = ctl[4]
		} else if !hasMsg {
			ok1 = false
		}
		if !ok1 || !ok2 {
			return protoErr("malformed MONITOR_P_EXIT")
		}
		c.monitorExitIn(to, ref, reason)
	}
	return nil
}

// isUnlinkID reports whether v can be an unlink id: an integer in [1,
// 2^64-1] (a big one is never ours, but is a valid id to acknowledge).
func isUnlinkID(v any) bool {
	switch v := v.(type) {
	case int:
		return v > 0
	case *big.Int:
		return v.Sign() > 0 && v.BitLen() <= 64
	}
	return false
}

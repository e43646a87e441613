package dist

// Monitors across nodes and of nodes (see link.go for the protocol and
// its lock).

import (
	"fmt"
	"sync"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// monitorRef is the wire reference of the local monitor ref: a reference
// of this node that no MakeRef returns (its third word has the top bit
// set; MakeRef's never does), so the two never collide in out.
func (n *Node) monitorRef(ref actor.Ref) etf.Ref {
	r := uint64(ref)
	return etf.Ref{Node: n.name, Creation: n.etfNode.Creation, Len: 3,
		Words: [5]uint32{uint32(r) & 0x3ffff, uint32(r >> 18), uint32(r>>50) | 1<<31}}
}

// MonitorRemote is actor.RemoteSignals': the local actor watcher monitors
// the remote pid target under ref (MONITOR_P), connecting to its node if
// need be.
func (n *Node) MonitorRemote(watcher, target actor.Pid, ref actor.Ref) {
	n.monitorOut(&outMon{watcher: watcher, ref: ref, target: target})
}

// MonitorRemoteName is actor.RemoteSignals': the local actor watcher
// monitors the name registered on node (MONITOR_P of an atom).
func (n *Node) MonitorRemoteName(watcher actor.Pid, name string, node actor.Atom, ref actor.Ref) {
	at, err := actor.RemotePid(actor.RemoteID{Node: node})
	if err != nil {
		n.sys.RemoteDown(watcher, actor.Down{Ref: ref, Reason: actor.NoConnection, Name: name, Node: node})
		return
	}
	n.monitorOut(&outMon{watcher: watcher, ref: ref, target: at, name: actor.Atom(name)})
}

// monitorOut places the monitor m (its target's node is m.target's) under
// the wire reference of m.ref, or a fresh one for a monitor of Go code,
// and returns that reference.
func (n *Node) monitorOut(m *outMon) etf.Ref {
	id, _ := m.target.Remote()
	var eref etf.Ref
	if m.down != nil {
		eref = n.MakeRef()
	} else {
		eref = n.monitorRef(m.ref)
	}
	if id.Node == n.name {
		n.fireDown(m, atomNoproc) // an earlier incarnation's pid
		return eref
	}
	p, s, ok := n.peerOf(id.Node)
	if !ok {
		n.fireDown(m, actor.NoConnection)
		return eref
	}
	s.out[eref] = m
	var to any = m.target
	if m.name != "" {
		to = m.name
	}
	from := m.watcher
	if from.IsZero() {
		from = n.kernel
	}
	n.signal(p, etf.Tuple{opMonitorP, from, to, eref})
	s.mu.Unlock()
	return eref
}

// DemonitorRemote is actor.RemoteSignals': watcher's monitor ref of target
// (a remote pid, or for a monitor by name the pid standing for the node)
// is removed (DEMONITOR_P); true if it was active.
func (n *Node) DemonitorRemote(watcher, target actor.Pid, ref actor.Ref) bool {
	id, ok := target.Remote()
	if !ok {
		return false
	}
	return n.demonitorOut(id.Node, n.monitorRef(ref), watcher)
}

func (n *Node) demonitorOut(node actor.Atom, eref etf.Ref, watcher actor.Pid) bool {
	p := n.livePeer(node)
	if p == nil {
		return false // its connection has ended: its Down is fired or on its way
	}
	s := p.signals(n)
	defer s.mu.Unlock()
	m, ok := s.out[eref]
	if !ok || m.watcher != watcher {
		return false
	}
	delete(s.out, eref)
	var to any = m.target
	if m.name != "" {
		to = m.name
	}
	from := watcher
	if from.IsZero() {
		from = n.kernel
	}
	n.signal(p, etf.Tuple{opDemonitorP, from, to, eref})
	return true
}

// watchPid monitors the remote pid target for Go code that is not an
// actor (a call waiting on its callee). down runs once, unless cancel
// returned true first: with the target's exit reason, noproc, or
// noconnection (its connection lost, or its node unreachable). down runs
// on a goroutine of the node, or on the caller's before watchPid returns;
// it must not block. ref is the monitor's wire reference (a fresh one of
// this node). cancel sends DEMONITOR_P; it reports true if down will never
// run.
func (n *Node) watchPid(target actor.Pid, down func(actor.Reason)) (ref etf.Ref, cancel func() bool) {
	return n.watch(&outMon{target: target, down: once(down)})
}

// WatchRemote is actor.RemoteSignals': watchPid for System.Monitor.
func (n *Node) WatchRemote(target actor.Pid, down func(actor.Reason)) (cancel func() bool) {
	_, cancel = n.watchPid(target, down)
	return cancel
}

// watchName is watchPid of the name registered on node (an unknown name:
// noproc).
func (n *Node) watchName(name, node actor.Atom, down func(actor.Reason)) (ref etf.Ref, cancel func() bool) {
	at, err := actor.RemotePid(actor.RemoteID{Node: node})
	if err != nil {
		down(actor.NoConnection)
		return etf.Ref{}, func() bool { return false }
	}
	return n.watch(&outMon{target: at, name: name, down: once(down)})
}

func (n *Node) watch(m *outMon) (etf.Ref, func() bool) {
	eref := n.monitorOut(m)
	id, _ := m.target.Remote()
	return eref, func() bool { return n.demonitorOut(id.Node, eref, actor.Pid{}) }
}

// once makes f safe to call twice (it is not: every path removes the
// monitor first; this keeps a broken invariant from running a callback
// twice).
func once(f func(actor.Reason)) func(actor.Reason) {
	var o sync.Once
	return func(r actor.Reason) { o.Do(func() { f(r) }) }
}

// Incoming monitor signals, from c's reader goroutine.

// monitorIn is a MONITOR_P from the peer's process watcher of the local
// pid or registered name target.
func (c *conn) monitorIn(watcher actor.Pid, target any, eref etf.Ref) {
	n := c.n
	s := c.p.signals(n)
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	var pid actor.Pid
	var name actor.Atom
	switch t := target.(type) {
	case actor.Pid:
		pid = t
	case actor.Atom:
		name = t
		pid, _ = n.sys.Whereis(string(t))
	}
	if ref, ok := n.sys.AddRemoteMonitor(pid, watcher); ok {
		if old, dup := s.in[eref]; dup { // a peer that reuses a ref: keep one
			n.sys.RemoveRemoteMonitor(old.target, old.ref)
			delete(s.inLocal, old.ref)
		}
		s.in[eref] = inMon{target: pid, watcher: watcher, ref: ref, name: name}
		s.inLocal[ref] = eref
		return
	}
	n.signal(c.p, etf.Tuple{opMonitorPExit, target, watcher, eref, atomNoproc})
}

// demonitorIn is a DEMONITOR_P of the peer's monitor eref.
func (c *conn) demonitorIn(eref etf.Ref) {
	n := c.n
	s := c.p.signals(n)
	defer s.mu.Unlock()
	if m, ok := s.in[eref]; ok {
		delete(s.in, eref)
		delete(s.inLocal, m.ref)
		n.sys.RemoveRemoteMonitor(m.target, m.ref)
	}
}

// monitorExitIn is a MONITOR_P_EXIT: the target of our monitor eref died.
func (c *conn) monitorExitIn(watcher actor.Pid, eref etf.Ref, reason any) {
	n := c.n
	s := c.p.signals(n)
	m, ok := s.out[eref]
	if ok && m.watcher == watcher || ok && m.watcher.IsZero() {
		delete(s.out, eref)
	} else {
		ok = false
	}
	s.mu.Unlock()
	if ok {
		n.fireDown(m, localReason(reason))
	}
}

// MonitorExitRemote is actor.RemoteSignals': the local actor target, which
// the remote watcher monitored under the local ref, died with reason
// (MONITOR_P_EXIT).
func (n *Node) MonitorExitRemote(target, watcher actor.Pid, ref actor.Ref, reason actor.Reason) {
	p, s := n.liveSignalsOf(watcher)
	if s == nil {
		return
	}
	defer s.mu.Unlock()
	eref, ok := s.inLocal[ref]
	if !ok || s.dead {
		return
	}
	m := s.in[eref]
	delete(s.in, eref)
	delete(s.inLocal, ref)
	var from any = target
	if m.name != "" {
		from = m.name
	}
	n.signal(p, etf.Tuple{opMonitorPExit, from, watcher, eref, n.wireReason(reason)})
}

// Node monitors.

// MonitorNode makes pid receive NodeDown{Node: node} when the connection to
// node is lost, as erlang:monitor_node(Node, true) does: it connects if
// need be, and if the node cannot be reached the NodeDown comes at once.
// Each call is one monitor and gives one NodeDown (for the connection it
// watched); stop removes it if it has not fired (monitor_node(Node,
// false)). A monitor of this node itself does nothing. The NodeDown is
// delivered past pid's mailbox bound (System.Deliver).
func (n *Node) MonitorNode(pid actor.Pid, node actor.Atom) (stop func()) {
	if node == n.name {
		return func() {}
	}
	p, s, ok := n.peerOf(node)
	if !ok {
		n.sys.Deliver(pid, NodeDown{Node: node, Reason: fmt.Errorf("dist: no connection to %s", node)})
		return func() {}
	}
	s.nodeMons[pid]++
	s.mu.Unlock()
	var o sync.Once
	return func() {
		o.Do(func() {
			s := p.signals(n)
			if s.nodeMons[pid] > 0 {
				if s.nodeMons[pid]--; s.nodeMons[pid] == 0 {
					delete(s.nodeMons, pid)
				}
			}
			s.mu.Unlock()
		})
	}
}

// nodeDown delivers the NodeDown of the peer node that ended with reason
// to its monitor_node subscribers.
func (n *Node) nodeDown(node actor.Atom, reason error, subs map[actor.Pid]int) {
	for pid, k := range subs {
		for range k {
			if n.sys.Deliver(pid, NodeDown{Node: node, Reason: reason}) != nil {
				break // dead
			}
		}
	}
}

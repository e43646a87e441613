package pg

// The scope actor: pg.erl's gen_server, message for message (see scope.go).

import (
	"fmt"
	"slices"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// Requests of Join and Leave (pg.erl's join_local and leave_local calls).
type (
	joinReq struct {
		key   string
		group any
		pids  []actor.Pid
	}
	leaveReq struct {
		key   string
		group any
		pids  []actor.Pid
	}
)

// member is a local member: its monitor and the keys of the groups it
// joined, once per join.
type member struct {
	ref  actor.Ref
	keys []string
}

// peerView is a peer scope: its monitor, its node and its groups' members
// (by key) with the groups' values.
type peerView struct {
	ref    actor.Ref // zero if the monitor could not be set up
	node   actor.Atom
	groups map[string][]actor.Pid
	values map[string]any
}

// scopeActor owns the scope's state; only its handler touches it.
type scopeActor struct {
	s      *Scope
	local  map[actor.Pid]*member
	remote map[actor.Pid]*peerView
	subs   subscriptions   // monitor.go
	warned map[string]bool // the kinds of bad message already reported
}

func (a *scopeActor) Init(c *actor.Context) {
	n := a.s.n
	// Subscribe before listing, so that no node comes up unseen (one that
	// comes up in between is discovered twice, which is harmless).
	stop := n.MonitorNodes(c.Self())
	a.s.mu.Lock()
	a.s.stopNodes = stop
	a.s.mu.Unlock()
	for _, node := range n.Nodes() {
		a.discover(c, node)
	}
}

func (a *scopeActor) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Request:
		if a.subscribe(c, m) {
			return
		}
		switch r := m.Msg.(type) {
		case joinReq:
			a.joinLocal(c, r)
			c.Reply(m, nil)
		case leaveReq:
			if a.leaveLocal(c, r) {
				c.Reply(m, nil)
			} else {
				c.ReplyError(m, ErrNotJoined)
			}
		default:
			c.ReplyError(m, fmt.Errorf("pg: scope %s: unknown request %T", a.s.name, m.Msg))
		}
	case actor.Down:
		switch {
		case a.subscriberDown(m):
		case m.Pid.IsRemote():
			a.peerDown(c, m)
		default:
			a.memberDown(c, m)
		}
	case dist.NodeUp:
		if !slices.Contains(a.s.n.HiddenNodes(), m.Node) { // nodeup is for visible nodes only
			a.discover(c, m.Node)
		}
	case dist.NodeDown:
		// pg.erl ignores nodedown and waits for the peer monitors' 'DOWN'.
	case etf.Tuple:
		a.peerMessage(c, m)
	default:
		if v, ok := actor.CastMsg(msg); ok {
			if t, ok := v.(etf.Tuple); ok && len(t) == 3 && t[0] == atomSync {
				a.sync(c, t)
				return
			}
		}
		a.bad("a message that is no pg message")
	}
}

// discover sends {discover, Self} to the scope on node.
func (a *scopeActor) discover(c *actor.Context, node actor.Atom) {
	if node == a.s.n.Name() {
		return
	}
	if err := a.s.n.SendName(c.Self(), a.s.name, node, etf.Tuple{atomDiscover, c.Self()}); err != nil {
		a.report(fmt.Sprintf("discover to %s: %v", node, err))
	}
}

// peerMessage handles the messages peers send (pg.erl's handle_info and
// handle_cast).
func (a *scopeActor) peerMessage(c *actor.Context, t etf.Tuple) {
	if len(t) == 0 {
		a.bad("an empty tuple")
		return
	}
	switch {
	case (len(t) == 2 || len(t) == 3) && t[0] == atomDiscover:
		if peer, ok := a.peerPid(t[1]); ok {
			a.handleDiscover(c, peer)
		}
	case len(t) == 4 && t[0] == atomJoin:
		a.remoteJoin(c, t)
	case len(t) == 4 && t[0] == atomLeave:
		a.remoteLeave(c, t)
	case len(t) == 2 && t[0] == atomGenCast:
		if s, ok := t[1].(etf.Tuple); ok && len(s) == 3 && s[0] == atomSync {
			a.sync(c, s)
			return
		}
		a.bad("a cast that is no sync")
	default:
		a.bad("a tuple that is no pg message")
	}
}

// peerPid checks that a message's Peer is a remote pid.
func (a *scopeActor) peerPid(v any) (actor.Pid, bool) {
	p, ok := v.(actor.Pid)
	if !ok || !p.IsRemote() {
		a.bad("a peer that is no remote pid")
		return actor.Pid{}, false
	}
	return p, true
}

// connected reports whether peer's node is connected. A discover or a
// sync from a peer whose node is not is one that came over a connection
// that has ended since (the reader had it in hand when the connection was
// closed, and the peer's Down overtook it): answering it, or monitoring
// the peer, would dial the node again. It is dropped; if the node comes
// back, its nodeup starts a discover afresh. (In Erlang such a message
// cannot come after the peer's 'DOWN'.)
func (a *scopeActor) connected(peer actor.Pid) bool {
	id, _ := peer.Remote()
	return a.s.n.Connected(id.Node)
}

// handleDiscover: answer with a sync of every local member, and discover
// the peer in turn if it is new (pg.erl's handle_discover).
func (a *scopeActor) handleDiscover(c *actor.Context, peer actor.Pid) {
	if !a.connected(peer) {
		return
	}
	a.send(c, peer, etf.Tuple{atomGenCast, etf.Tuple{atomSync, c.Self(), a.localGroups()}})
	if _, ok := a.remote[peer]; !ok {
		a.addPeer(c, peer)
		a.send(c, peer, etf.Tuple{atomDiscover, c.Self()})
	}
}

// localGroups is pg.erl's all_local_pids: [{Group, [Pid]}] for every group
// with local members.
func (a *scopeActor) localGroups() []any {
	s := a.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []any{}
	for _, e := range s.groups {
		if len(e.local) > 0 {
			out = append(out, etf.Tuple{e.group, pidList(e.local)})
		}
	}
	return out
}

func pidList(pids []actor.Pid) []any {
	out := make([]any, len(pids))
	for i, p := range pids {
		out[i] = p
	}
	return out
}

// pidsOf reads a join's or leave's PidOrPids: one pid or a list of pids.
func pidsOf(v any) ([]actor.Pid, bool) {
	switch v := v.(type) {
	case actor.Pid:
		return []actor.Pid{v}, true
	case []any:
		out := make([]actor.Pid, 0, len(v))
		for _, e := range v {
			p, ok := e.(actor.Pid)
			if !ok {
				return nil, false
			}
			out = append(out, p)
		}
		return out, true
	}
	return nil, false
}

// addPeer records a new peer scope and monitors it (pg.erl's
// erlang:monitor(process, Peer)). Another peer of its node is a scope that
// is gone (one scope of a name per node): it is dropped now rather than at
// its monitor's Down.
func (a *scopeActor) addPeer(c *actor.Context, peer actor.Pid) *peerView {
	id, _ := peer.Remote()
	for p, v := range a.remote {
		if v.node == id.Node && p != peer {
			a.dropPeer(c, p)
		}
	}
	ref, err := c.Monitor(peer)
	if err != nil {
		a.report(fmt.Sprintf("monitor of peer %v: %v", peer, err))
	}
	v := &peerView{ref: ref, node: id.Node, groups: map[string][]actor.Pid{}, values: map[string]any{}}
	a.remote[peer] = v
	return v
}

// dropPeer removes a peer scope, its monitor and all its members.
func (a *scopeActor) dropPeer(c *actor.Context, peer actor.Pid) {
	v := a.remote[peer]
	if v == nil {
		return
	}
	delete(a.remote, peer)
	if v.ref != 0 {
		c.Demonitor(v.ref, true)
	}
	for key, pids := range v.groups {
		a.leave(c, key, pids, false)
	}
}

// peerDown: a peer scope died, or its node went down (noconnection). If
// the node is connected again already, what came over the new connection
// (the peer's discover, its sync, its joins) may have come before this
// Down, which belongs to the old one: the peer is discovered again, and
// its sync (the whole of its local state) puts it back.
func (a *scopeActor) peerDown(c *actor.Context, d actor.Down) {
	v := a.remote[d.Pid]
	if v == nil || v.ref != d.Ref {
		return
	}
	a.dropPeer(c, d.Pid)
	if a.s.n.Connected(v.node) && !slices.Contains(a.s.n.HiddenNodes(), v.node) {
		a.discover(c, v.node)
	}
}

// sync replaces what is known of a peer's groups with its sync's
// (pg.erl's handle_sync and sync_groups). s is {sync, Peer, Groups}.
func (a *scopeActor) sync(c *actor.Context, s etf.Tuple) {
	peer, ok := a.peerPid(s[1])
	if !ok {
		return
	}
	list, ok := s[2].([]any)
	if !ok {
		a.bad("a sync whose groups are no list")
		return
	}
	type group struct {
		key   string
		value any
		pids  []actor.Pid
	}
	groups := make([]group, 0, len(list))
	for _, e := range list {
		t, ok := e.(etf.Tuple)
		if !ok || len(t) != 2 {
			a.bad("a sync whose groups are not {Group, Pids}")
			return
		}
		_, isList := t[1].([]any)
		pids, ok := pidsOf(t[1])
		if !ok || !isList {
			a.bad("a sync whose members are no list of pids")
			return
		}
		key, value, err := a.s.key(t[0])
		if err != nil {
			a.bad("a sync with a bad group")
			return
		}
		groups = append(groups, group{key, value, pids})
	}
	if !a.connected(peer) {
		return
	}
	v := a.remote[peer]
	if v == nil {
		v = a.addPeer(c, peer)
	}
	old := v.groups
	v.groups, v.values = make(map[string][]actor.Pid, len(groups)), make(map[string]any, len(groups))
	for _, g := range groups {
		if prev, ok := old[g.key]; ok {
			delete(old, g.key)
			if !slices.Equal(prev, g.pids) {
				a.s.replaceTable(g.key, g.value, prev, g.pids)
				a.notify(c, false, g.key, g.value, prev)
				a.notify(c, true, g.key, g.value, g.pids)
			}
		} else {
			a.join(c, g.key, g.value, g.pids, false)
		}
		v.groups[g.key], v.values[g.key] = g.pids, g.value
	}
	for key, pids := range old {
		a.leave(c, key, pids, false)
	}
}

// remoteJoin is {join, Peer, Group, PidOrPids}.
func (a *scopeActor) remoteJoin(c *actor.Context, t etf.Tuple) {
	peer, ok := a.peerPid(t[1])
	if !ok {
		return
	}
	pids, ok := pidsOf(t[3])
	if !ok {
		a.bad("a join whose members are no pids")
		return
	}
	key, value, err := a.s.key(t[2])
	if err != nil {
		a.bad("a join with a bad group")
		return
	}
	v := a.remote[peer]
	if v == nil {
		return // a peer not in the overlay (yet, or any more): pg.erl ignores it
	}
	a.join(c, key, value, pids, false)
	v.groups[key] = append(slices.Clone(pids), v.groups[key]...)
	v.values[key] = value
}

// remoteLeave is {leave, Peer, PidOrPids, Groups}.
func (a *scopeActor) remoteLeave(c *actor.Context, t etf.Tuple) {
	peer, ok := a.peerPid(t[1])
	if !ok {
		return
	}
	pids, ok := pidsOf(t[2])
	if !ok {
		a.bad("a leave whose members are no pids")
		return
	}
	list, ok := t[3].([]any)
	if !ok {
		a.bad("a leave whose groups are no list")
		return
	}
	v := a.remote[peer]
	if v == nil {
		return
	}
	for _, g := range list {
		key, _, err := a.s.key(g)
		if err != nil {
			a.bad("a leave with a bad group")
			continue
		}
		a.leave(c, key, pids, false)
		if rest := subtract(v.groups[key], pids); len(rest) > 0 {
			v.groups[key] = rest
		} else {
			delete(v.groups, key)
			delete(v.values, key)
		}
	}
}

// joinLocal is pg.erl's join_local: monitor new members, update the table,
// tell every peer.
func (a *scopeActor) joinLocal(c *actor.Context, r joinReq) {
	for _, p := range r.pids {
		m := a.local[p]
		if m == nil {
			ref, err := c.Monitor(p)
			if err != nil {
				// Not a pid of this System's (checked by Join): nothing to
				// monitor, so it cannot stay a member.
				a.report(fmt.Sprintf("monitor of member %v: %v", p, err))
				continue
			}
			m = &member{ref: ref}
			a.local[p] = m
		}
		m.keys = append(m.keys, r.key)
	}
	a.join(c, r.key, r.group, r.pids, true)
	a.broadcast(c, etf.Tuple{atomJoin, c.Self(), r.group, pidList(r.pids)})
}

// leaveLocal is pg.erl's leave_local: false (not_joined) if no pid named
// had joined the group.
func (a *scopeActor) leaveLocal(c *actor.Context, r leaveReq) bool {
	changed := false
	for _, p := range r.pids {
		m := a.local[p]
		if m == nil {
			continue
		}
		i := slices.Index(m.keys, r.key)
		if i < 0 {
			continue
		}
		changed = true
		m.keys = slices.Delete(m.keys, i, i+1)
		if len(m.keys) == 0 {
			c.Demonitor(m.ref, true)
			delete(a.local, p)
		}
	}
	if !changed {
		return false
	}
	a.leave(c, r.key, r.pids, true)
	a.broadcast(c, etf.Tuple{atomLeave, c.Self(), pidList(r.pids), []any{r.group}})
	return true
}

// memberDown: a local member died; it leaves every group it was in.
func (a *scopeActor) memberDown(c *actor.Context, d actor.Down) {
	m := a.local[d.Pid]
	if m == nil || m.ref != d.Ref {
		return // a late Down: it left meanwhile
	}
	delete(a.local, d.Pid)
	groups := make([]any, 0, len(m.keys))
	one := []actor.Pid{d.Pid}
	for _, key := range m.keys {
		if g, ok := a.leave(c, key, one, true); ok {
			groups = append(groups, g)
		}
	}
	a.broadcast(c, etf.Tuple{atomLeave, c.Self(), pidList(one), groups})
}

// broadcast sends msg to every peer scope whose node is connected
// (pg.erl's broadcast, with [noconnect]).
func (a *scopeActor) broadcast(c *actor.Context, msg etf.Tuple) {
	for p := range a.remote {
		a.send(c, p, msg)
	}
}

func (a *scopeActor) send(c *actor.Context, peer actor.Pid, msg etf.Tuple) {
	id, _ := peer.Remote()
	if !a.s.n.Connected(id.Node) {
		return
	}
	if err := c.Send(peer, msg); err != nil {
		a.report(fmt.Sprintf("send to peer %v: %v", peer, err))
	}
}

// bad reports a malformed message from a peer, once per kind: a peer's
// bytes never crash the scope (pg.erl would crash with badarg).
func (a *scopeActor) bad(what string) {
	if a.warned == nil {
		a.warned = make(map[string]bool)
	}
	if !a.warned[what] {
		a.warned[what] = true
		a.report("ignored " + what + " (reported once)")
	}
}

func (a *scopeActor) report(text string) {
	a.s.n.System().Report(actor.Report{Kind: actor.OtherReport, Context: "pg " + a.s.name, Text: text})
}

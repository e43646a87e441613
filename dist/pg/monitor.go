package pg

// Monitors of groups and of the scope (pg:monitor/2, pg:monitor_scope/1,
// OTP 25.1).
//
// A subscriber is a local actor. The scope monitors it (the monitor's Ref
// is the subscription's, as in pg.erl, which drops the subscription on the
// subscriber's 'DOWN') and sends it a Change for every change of the table
// that the subscription covers, in the order the scope makes them, after
// the table has changed: so a subscriber that rebuilds a group from the
// snapshot Monitor returned and the Changes that follow holds the table's
// view of it. pg.erl notifies in each of its table updates; so does the
// scope here (join, leave, sync), and a sync that changes a peer's group
// says it as a leave of the old members and a join of the new ones.
// Subscriptions are of this node's scope only: they are not part of the
// protocol between nodes.

import (
	"slices"

	"github.com/colonyrt/colony/actor"
)

// Change is what a subscriber receives (pg.erl's {Ref, join, Group, Pids}
// and {Ref, leave, Group, Pids}): Pids joined (Joined) or left Group, each
// once per join or leave.
type Change struct {
	Ref    actor.Ref
	Joined bool
	Group  any
	Pids   []actor.Pid
}

// Members is a group and its members, in Monitor's and MonitorScope's
// snapshots.
type Members struct {
	Group any
	Pids  []actor.Pid
}

type (
	monitorReq      struct{ key string }
	monitorScopeReq struct{}
	demonitorReq    struct{ ref actor.Ref }
	monitorReply    struct {
		ref    actor.Ref
		pids   []actor.Pid
		groups []Members
	}
)

// Monitor subscribes the calling actor to group's changes (pg:monitor/2):
// it returns the subscription's Ref and the members now; every later
// change comes as a Change with that Ref, until Demonitor or the
// subscriber's death.
func (s *Scope) Monitor(c *actor.Context, group any) (actor.Ref, []actor.Pid, error) {
	key, _, err := s.key(group)
	if err != nil {
		return 0, nil, err
	}
	v, err := c.Call(s.pid, monitorReq{key}, actor.Infinity)
	if err != nil {
		return 0, nil, err
	}
	r := v.(monitorReply)
	return r.ref, r.pids, nil
}

// MonitorScope subscribes the calling actor to every group's changes
// (pg:monitor_scope/1): it returns the subscription's Ref and every group
// with members now.
func (s *Scope) MonitorScope(c *actor.Context) (actor.Ref, []Members, error) {
	v, err := c.Call(s.pid, monitorScopeReq{}, actor.Infinity)
	if err != nil {
		return 0, nil, err
	}
	r := v.(monitorReply)
	return r.ref, r.groups, nil
}

// Demonitor ends a subscription of the calling actor (pg:demonitor/2) and
// removes its Changes already in the actor's mailbox. false if ref was no
// subscription of this scope.
func (s *Scope) Demonitor(c *actor.Context, ref actor.Ref) bool {
	v, err := c.Call(s.pid, demonitorReq{ref}, actor.Infinity)
	if err != nil || v != true {
		return false
	}
	for {
		if _, err := c.Receive(func(m any) bool {
			ch, ok := m.(Change)
			return ok && ch.Ref == ref
		}, 0); err != nil {
			return true
		}
	}
}

// subscriptions are the scope actor's subscribers (owned by it).
type subscriptions struct {
	scope  map[actor.Ref]actor.Pid // MonitorScope's
	groups map[actor.Ref]groupSub  // Monitor's, by ref
	byKey  map[string][]actor.Ref  // Monitor's, by group
}

type groupSub struct {
	pid actor.Pid
	key string
}

// subscribe handles the three requests; false if req is none of them.
func (a *scopeActor) subscribe(c *actor.Context, req actor.Request) bool {
	subs := &a.subs
	if subs.scope == nil {
		subs.scope, subs.groups, subs.byKey = map[actor.Ref]actor.Pid{}, map[actor.Ref]groupSub{}, map[string][]actor.Ref{}
	}
	switch r := req.Msg.(type) {
	case monitorReq:
		ref, err := c.Monitor(req.From())
		if err != nil {
			c.ReplyError(req, err)
			return true
		}
		subs.groups[ref] = groupSub{req.From(), r.key}
		subs.byKey[r.key] = append(subs.byKey[r.key], ref)
		a.s.mu.RLock()
		var pids []actor.Pid
		if e := a.s.groups[r.key]; e != nil {
			pids = slices.Clone(e.all)
		}
		a.s.mu.RUnlock()
		c.Reply(req, monitorReply{ref: ref, pids: pids})
	case monitorScopeReq:
		ref, err := c.Monitor(req.From())
		if err != nil {
			c.ReplyError(req, err)
			return true
		}
		subs.scope[ref] = req.From()
		a.s.mu.RLock()
		groups := make([]Members, 0, len(a.s.groups))
		for _, e := range a.s.groups {
			groups = append(groups, Members{e.group, slices.Clone(e.all)})
		}
		a.s.mu.RUnlock()
		c.Reply(req, monitorReply{ref: ref, groups: groups})
	case demonitorReq:
		ok := a.unsubscribe(r.ref)
		if ok {
			c.Demonitor(r.ref, true)
		}
		c.Reply(req, ok)
	default:
		return false
	}
	return true
}

// unsubscribe drops subscription ref; false if there was none.
func (a *scopeActor) unsubscribe(ref actor.Ref) bool {
	subs := &a.subs
	if _, ok := subs.scope[ref]; ok {
		delete(subs.scope, ref)
		return true
	}
	g, ok := subs.groups[ref]
	if !ok {
		return false
	}
	delete(subs.groups, ref)
	refs := slices.DeleteFunc(subs.byKey[g.key], func(r actor.Ref) bool { return r == ref })
	if len(refs) == 0 {
		delete(subs.byKey, g.key)
	} else {
		subs.byKey[g.key] = refs
	}
	return true
}

// subscriberDown drops the subscription of a subscriber that died; false
// if d is no subscription's Down.
func (a *scopeActor) subscriberDown(d actor.Down) bool { return a.unsubscribe(d.Ref) }

// notify tells the subscribers of a change of the group key.
func (a *scopeActor) notify(c *actor.Context, joined bool, key string, group any, pids []actor.Pid) {
	subs := &a.subs
	if len(subs.scope) == 0 && len(subs.byKey[key]) == 0 {
		return
	}
	for ref, pid := range subs.scope {
		c.Send(pid, Change{Ref: ref, Joined: joined, Group: group, Pids: slices.Clone(pids)})
	}
	for _, ref := range subs.byKey[key] {
		c.Send(subs.groups[ref].pid, Change{Ref: ref, Joined: joined, Group: group, Pids: slices.Clone(pids)})
	}
}

// join and leave change the table and tell the subscribers.
func (a *scopeActor) join(c *actor.Context, key string, group any, pids []actor.Pid, local bool) {
	a.s.joinTable(key, group, pids, local)
	a.notify(c, true, key, group, pids)
}

func (a *scopeActor) leave(c *actor.Context, key string, pids []actor.Pid, local bool) (any, bool) {
	g, ok := a.s.leaveTable(key, pids, local)
	if ok {
		a.notify(c, false, key, g, pids)
	}
	return g, ok
}

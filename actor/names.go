package actor

import (
	"errors"
	"fmt"
	"slices"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/registry"
)

// Design note: group monitors (pg:monitor/1).
//
// Problem. A monitor of a group must see the members at the moment it starts
// and then every join and leave, none lost or doubled in between, one group's
// changes in the order they were made (a join then a leave of one pid never
// arrives as leave then join), and none once DemonitorGroup has returned
// (pg:demonitor/1 also flushes those already in the mailbox). Joins, leaves
// and deaths run on any goroutine; the watcher reads its mailbox on its own.
//
// Protocol. The registry (registry/groups.go, "Monitors") takes the snapshot
// and records the monitor in one step, and hands every change to
// tellGroupMonitor while its lock is held; tellGroupMonitor only pushes onto
// the watcher's user lane (deliver: the push is lock-free, the wake a CAS and
// at most a run-queue push) so the lock orders the pushes, and a mailbox
// keeps the order of pushes that do not overlap. Each change carries the
// monitor's sequence number (GroupChange.seq).
//
// Stopping is the owner's business, as Demonitor's is: the owner keeps, in
// its procExt, the monitors it owns with the seq of the last change it took
// (accept). DemonitorGroup removes the monitor from the registry, which says
// how many changes it was told; changes already taken but skipped by a
// selective receive are removed from the save queue; those told but not yet
// taken are dropped by accept when they come, up to that count, after which
// the record goes. No record outlives the changes it waits for.
//
// Death. A monitor is recorded under the watcher's coldState.mu, refused once
// dead is set, and the flag groupMons tells the finaliser to call RemoveAll:
// the same protocol that makes JoinGroup atomic with the member's death. An
// actor that never joined or monitored a group never touches the registry's
// lock when it dies.

// names is the System's name registry and process groups.
type names struct {
	reg    *registry.Registry[Pid]
	groups *registry.Groups[Pid]
}

// init makes the tables; notify is told of every change to a monitored group.
func (n *names) init(notify func(registry.Change[Pid])) {
	n.reg = registry.New[Pid]()
	n.groups = &registry.Groups[Pid]{Notify: notify}
}

// mapRegErr turns a registry error about name into the actor package's
// sentinel, wrapped with the name ("actor: name already registered:
// \"worker\""), so errors.Is works against actor's errors alone.
func mapRegErr(err error, name string) error {
	var sentinel error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, registry.ErrEmptyName):
		return ErrBadName
	case errors.Is(err, registry.ErrNameTaken):
		sentinel = ErrNameTaken
	case errors.Is(err, registry.ErrAlreadyNamed):
		sentinel = ErrAlreadyNamed
	case errors.Is(err, registry.ErrNotRegistered):
		sentinel = ErrNotRegistered
	default:
		return err
	}
	return fmt.Errorf("%w: %q", sentinel, name)
}

func (n *names) register(name string, pid Pid) error {
	return mapRegErr(n.reg.Register(name, pid), name)
}

// unregisterPid removes name if pid still holds it.
func (n *names) unregisterPid(name string, pid Pid) {
	if cur, ok := n.reg.Whereis(name); ok && cur == pid {
		n.reg.Remove(pid)
	}
}

// Register gives pid a name (Erlang's register/2). Errors: ErrBadName for "",
// ErrNameTaken, ErrAlreadyNamed (an actor holds at most one name), ErrNoProc
// for a dead pid (Erlang's badarg; ErrStopped once the System has shut
// down, as for Send), ErrBadPid for the zero Pid or another System's; name
// errors are wrapped with the name. The name vanishes when the actor dies,
// in the same step as its links and monitors fire.
func (sys *System) Register(name string, pid Pid) error {
	if name == "" {
		return ErrBadName
	}
	p, err := sys.lookup(pid)
	if err != nil {
		if err == ErrNoProc && sys.halt.Load() {
			return ErrStopped
		}
		return err
	}
	return sys.registerCold(p.coldNode(), name, pid)
}

// registerCold registers pid, whose cold state is cs, under name. Holding
// cs.mu across the registry insert makes registration atomic with death:
// finalise marks dead under cs.mu before reading the name. ErrNoProc if pid
// died first.
func (sys *System) registerCold(cs *coldState, name string, pid Pid) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.dead {
		return ErrNoProc
	}
	if err := sys.nm.register(name, pid); err != nil {
		return err
	}
	cs.name = name
	return nil
}

// releaseName removes name if p holds it: a server whose Init failed gives
// its start name back before its starter learns of the failure. Under cs.mu,
// as Unregister, so the record's name and the registry entry go in one step
// and a death meanwhile finds either both or neither.
func (sys *System) releaseName(p *proc, name string) {
	cs := p.cold.Load()
	if name == "" || cs == nil {
		return // no name was given, or the actor never held one
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.name == name {
		cs.name = ""
		sys.nm.unregisterPid(name, p.pid)
	}
}

// spawnName is the name opts give an actor (the Name option), or "".
func spawnName(opts []SpawnOption) string {
	o := applySpawnOpts(opts)
	return o.name
}

// Unregister removes a name (Erlang's unregister/1). ErrBadName for "",
// as Register; ErrNotRegistered (wrapped with the name) if no actor holds
// it.
func (sys *System) Unregister(name string) error {
	if name == "" {
		return ErrBadName
	}
	pid, ok := sys.nm.reg.Whereis(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotRegistered, name)
	}
	if p := sys.procOf(pid); p != nil {
		if cs := p.cold.Load(); cs != nil {
			cs.mu.Lock()
			if cs.name == name {
				// Clear the record's name and remove the registry entry in
				// one step under cs.mu, as registerCold adds them. Done in
				// two, a death between them would find no name to remove,
				// signal its monitors and links, and leave the name bound
				// to the dead pid until this call got to the registry: a
				// Register after the Down would fail ErrNameTaken.
				cs.name = ""
				err := sys.nm.reg.Unregister(name)
				cs.mu.Unlock()
				return mapRegErr(err, name)
			}
			cs.mu.Unlock()
		}
	}
	return mapRegErr(sys.nm.reg.Unregister(name), name)
}

// Whereis returns the actor registered under name.
func (sys *System) Whereis(name string) (Pid, bool) { return sys.nm.reg.Whereis(name) }

// Registered lists the registered names.
func (sys *System) Registered() []string { return sys.nm.reg.Names() }

// SendName sends msg to the actor registered under name. Unlike Send to a
// pid, sending to a name nobody holds fails loudly with ErrNotRegistered
// (Erlang raises badarg). After Shutdown it is ErrStopped, as Send.
func (sys *System) SendName(name string, msg any) error { return sys.sendNameWith(nil, name, msg) }

// sendNameWith is SendName from outside the schedulers, with the node
// cache nc, which the caller owns (nil: none).
func (sys *System) sendNameWith(nc *mailbox.Cache, name string, msg any) error {
	pid, err := sys.sendee(name)
	if err != nil {
		return err
	}
	return sys.sendWith(nil, nc, pid, msg)
}

// JoinGroup adds pid to a process group (OTP pg); an actor may join a group
// several times and is counted once per join. Members leave at death,
// before their monitors and links are told: whoever gets a member's Down or
// Exit no longer finds it in GroupMembers. Errors: ErrBadPid for the zero Pid or another System's; ErrNoProc for a
// dead pid (pg:join/2 accepts a dead pid and drops it when pg's monitor of
// it fires: here it is refused, so no membership outlives its actor). Every
// monitor of the group (Context.MonitorGroup) has been sent its GroupChange
// by the time JoinGroup returns.
func (sys *System) JoinGroup(group string, pid Pid) error {
	p, err := sys.lookup(pid)
	if err != nil {
		return err
	}
	cs := p.coldNode()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.dead {
		return ErrNoProc
	}
	cs.joined = true
	sys.nm.groups.Join(group, pid)
	return nil
}

// LeaveGroup removes one join of pid from group, and tells the group's
// monitors before it returns. Errors: ErrBadPid for the zero Pid or another
// System's; ErrNotJoined if pid has no join left in group (pg's
// not_joined), as for a dead pid; the monitors are then told nothing.
func (sys *System) LeaveGroup(group string, pid Pid) error {
	// A malformed pid is ErrBadPid, as for JoinGroup (not "not joined"). A
	// dead pid stays not joined, as in pg:
	// its death removed its entries.
	if _, err := sys.lookup(pid); err == ErrBadPid {
		return err
	}
	return sys.nm.groups.Leave(group, pid)
}

// JoinGroup adds the calling actor to group; see System.JoinGroup.
func (c *Context) JoinGroup(group string) error {
	c.proc()
	if c.orphan() {
		return ErrNoProc
	}
	return c.w.sys.JoinGroup(group, c.Self())
}

// LeaveGroup removes one of the calling actor's joins of group; see
// System.LeaveGroup.
func (c *Context) LeaveGroup(group string) error {
	c.proc()
	if c.orphan() {
		return ErrNoProc
	}
	return c.w.sys.LeaveGroup(group, c.Self())
}

// GroupMembers lists group's members in join order, one entry per join.
func (sys *System) GroupMembers(group string) []Pid { return sys.nm.groups.Members(group) }

// WhichGroups lists the groups that have members, sorted
// (pg:which_groups/0, which documents no order). A group exists from its
// first join to its last member's leave or death; being monitored does not
// make it exist.
func (sys *System) WhichGroups() []string { return sys.nm.groups.Which() }

// GroupChange is the message a group monitor's owner receives
// (Context.MonitorGroup) for each change to the group: Pids joined it
// (Joined) or left it (pg's {Ref, join | leave, Group, Pids}). A member's
// death is one leave per join it had in the group. Pids is the receiver's
// to keep; it holds one pid (JoinGroup and LeaveGroup take one).
//
// A GroupChange travels the user lane, like Down: it is never refused by a
// MailboxBound (a monitor that lost changes would hold a wrong member list),
// so a bounded actor should monitor only groups whose churn it can keep up
// with. A change is sent in the step of the join, leave or death that makes
// it: JoinGroup and LeaveGroup return after it is queued, and a member's
// leaves are queued before its Down and Exit messages go out.
//
// A GroupChange may be copied and forwarded. One that an actor builds (the
// zero value included), or forwards from another actor's monitor, is an
// ordinary message to its receiver.
type GroupChange struct {
	Ref    Ref
	Group  string
	Joined bool
	Pids   []Pid
	seq    uint64 // the change's number for its monitor, from 1; 0 if not made by the runtime
}

// MonitorGroup starts monitoring group (pg:monitor/1): it returns the
// monitor's reference and the group's members at this moment (join order,
// one entry per join; nil if it has none), and from then on the actor
// receives a GroupChange for every join and leave of the group, deaths
// included. The snapshot and the first GroupChange are atomic: no change is
// missed or seen twice between them, so the snapshot plus the changes always
// rebuild GroupMembers as a multiset. Changes of one group arrive in the
// order they were made. The group need not exist. The monitor ends with
// DemonitorGroup or the actor's death. ErrNoProc if the actor has been
// killed while this handler runs.
func (c *Context) MonitorGroup(group string) (Ref, []Pid, error) {
	p := c.proc()
	if c.orphan() {
		return 0, nil, ErrNoProc
	}
	return c.w.sys.monitorGroup(p, group)
}

// monitorGroup records a monitor of group owned by p (the caller, its
// owner). Under p's cs.mu, as JoinGroup, so the monitor is made before p's
// death collects its monitors (the flag) or refused after.
func (sys *System) monitorGroup(p *proc, group string) (Ref, []Pid, error) {
	cs := p.coldNode()
	ref := sys.newRef()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.dead {
		return 0, nil, ErrNoProc
	}
	cs.groupMons = true
	members := sys.nm.groups.Monitor(group, uint64(ref), p.pid)
	e := p.x()
	if e.groupMons == nil {
		e.groupMons = make(map[Ref]uint64)
	}
	e.groupMons[ref] = 0 // no change taken yet; changes wait for the owner
	return ref, members, nil
}

// DemonitorGroup stops the group monitor ref (pg:demonitor/1): once it
// returns, no GroupChange for ref reaches the actor, and those already
// delivered and not yet handled are removed (pg's flush). It reports whether
// ref was a monitor of this actor still in force (pg's ok); false (a spent
// ref, another actor's) changes nothing.
func (c *Context) DemonitorGroup(ref Ref) bool {
	p := c.proc()
	return c.w.sys.demonitorGroup(p, ref)
}

// demonitorGroup is DemonitorGroup run by p, the owner (design note,
// "Stopping").
func (sys *System) demonitorGroup(p *proc, ref Ref) bool {
	e := p.ext
	if e == nil {
		return false
	}
	taken, ok := e.groupMons[ref]
	if !ok {
		return false
	}
	delete(e.groupMons, ref)
	told, ok := sys.nm.groups.Demonitor(uint64(ref), p.pid)
	if !ok {
		return false // p was killed meanwhile and its death took the monitor
	}
	e.save = slices.DeleteFunc(e.save, func(m any) bool {
		gc, is := m.(GroupChange)
		return is && gc.Ref == ref
	})
	if told > taken {
		if e.groupDrop == nil {
			e.groupDrop = make(map[Ref]uint64)
		}
		e.groupDrop[ref] = told
	}
	return true
}

// acceptGroupChange is accept's part for a GroupChange: it notes the last
// change taken of a monitor in force, and reports false for a change of a
// stopped monitor, still on its way when DemonitorGroup ran. A GroupChange
// the runtime did not make (seq 0), or forwarded from another actor's
// monitor, is an ordinary message. Owner only.
func (e *procExt) acceptGroupChange(gc GroupChange) bool {
	if gc.seq == 0 {
		return true
	}
	if taken, ok := e.groupMons[gc.Ref]; ok {
		e.groupMons[gc.Ref] = max(taken, gc.seq)
		return true
	}
	if last, ok := e.groupDrop[gc.Ref]; ok && gc.seq <= last {
		if gc.seq == last {
			delete(e.groupDrop, gc.Ref) // the last one on its way
		}
		return false
	}
	return true
}

// tellGroupMonitor delivers one change to a group monitor's owner. The
// registry calls it with its Groups lock held (lock order: docs/locking.md),
// which keeps one group's changes in order; it only queues and wakes. An
// owner that is dead (its finaliser is about to remove its monitors) or gone
// gets nothing, as any message to it.
func (sys *System) tellGroupMonitor(c registry.Change[Pid]) {
	p := sys.procOf(c.Watcher)
	if p == nil {
		return
	}
	sys.deliver(nil, p, GroupChange{Ref: Ref(c.Ref), Group: c.Group, Joined: c.Joined, Pids: c.Pids, seq: c.Seq})
}

package actor

// Signals across nodes: links, exits and monitors of remote pids.
//
// Problem. A link or monitor between a local actor and a remote one has one
// end here and one on the peer node, and the two are kept consistent by the
// distribution protocol's signals (LINK, UNLINK_ID, EXIT, MONITOR_P, ...),
// which package dist speaks. The local actor's end must still behave as a
// local link or monitor does: Unlink's promise (no exit signal from the
// link after it returns), exactly one Down per monitor, the death's signals
// sent once, links before monitors, and all of it racing the actor's own
// death.
//
// Rejected. (1) All remote state in dist, keyed by local pid: the
// finaliser would then have to ask dist about every dying actor (a cost
// for a System without distribution, and a lookup for every death), or
// carry a flag saying "has remote links" that every link path keeps
// right. (2) A proxy actor per remote peer holding the other half, so that
// a remote link is a local link to the proxy: the proxy's death would
// stand for the peer's, every signal costs a hop through its mailbox, and
// link/unlink ordering across the wire still needs the protocol's ids.
//
// Protocol. A remote link half, a monitor a remote process holds on a local
// actor, and a monitor a local actor holds on a remote one live in the local
// actor's monitor.Node exactly as local ones do, with the remote pid as the
// peer. So Close (the death) collects them with the rest, once, and the
// finaliser hands each remote entry to the route (RemoteSignals): an EXIT
// for a link, a MONITOR_P_EXIT for a monitor held on the actor, a
// DEMONITOR_P for a monitor it held. The route keeps the protocol's own
// state (a link's pending unlink id, the wire references of monitors, what
// to fire on the loss of a connection) and calls back into the entry
// points below for what arrives. Two rules make them race-free:
//
//   - A half's presence in the actor's Node is the arbiter for links:
//     RemoteLinkExit removes the half and signals under the Node's lock
//     (RemoveLinkThen), so an EXIT from the peer, the loss of the
//     connection and a local Unlink decide among themselves there, and
//     exactly one of them has an effect.
//   - For a monitor a local actor holds on a remote pid, the route's table
//     is the arbiter (the target's record is on the peer): whoever removes
//     the entry (a MONITOR_P_EXIT, the loss of the connection, Demonitor)
//     decides; RemoteDown only queues the Down, and the watching entry
//     stays until the Down is received, as for a local monitor (accept), so
//     Demonitor's mailbox rules hold unchanged.
//
// Without a RemoteSignals route the hooks cost a bit test on the pid in
// link, monitor and exit paths, and nothing on the send path.

// RemoteSignals is implemented by a Remote (see SetRemote) that carries
// links, exits and monitors to remote pids: package dist's Node. The actor
// package calls it; none of its methods may block (they queue on a
// connection), and none may call back into the actor package while it
// holds a lock that an entry point below takes.
type RemoteSignals interface {
	// LinkRemote links the local actor from (alive, in its handler) to the
	// remote pid to: the route records the link's state, adds the half
	// (AddRemoteLink) and sends LINK, unless it is linked already. If to's
	// node cannot be reached, the link fires at once with NoConnection
	// (RemoteLinkExit).
	LinkRemote(from, to Pid)
	// UnlinkRemote removes the link between the local actor from and the
	// remote pid to (RemoveRemoteLink) and, if there was one, sends
	// UNLINK_ID.
	UnlinkRemote(from, to Pid)
	// ExitRemote sends the exit signal of erlang:exit(To, Reason) from
	// from (a local actor, or the zero Pid) to the remote pid to (EXIT2).
	ExitRemote(from, to Pid, reason Reason) error
	// MonitorRemote makes the local actor watcher monitor the remote pid
	// target under ref (MONITOR_P); the Down comes through RemoteDown.
	MonitorRemote(watcher, target Pid, ref Ref)
	// MonitorRemoteName is MonitorRemote of the name registered on node.
	MonitorRemoteName(watcher Pid, name string, node Atom, ref Ref)
	// DemonitorRemote removes watcher's monitor ref of target (the pid
	// MonitorRemote was given, or for a monitor by name the pid of
	// RemoteID{Node: node}), sending DEMONITOR_P. It reports true if the
	// monitor was active, so that no Down for it will come; false if its
	// Down has been handed to RemoteDown (or it was unknown).
	DemonitorRemote(watcher, target Pid, ref Ref) bool
	// LinkExitRemote sends the exit signal of the local actor from's death
	// with reason to the remote pid to, linked to it (EXIT). Called by the
	// finaliser, once per link.
	LinkExitRemote(from, to Pid, reason Reason)
	// MonitorExitRemote tells the remote watcher that the local actor
	// target, which it monitored under ref (AddRemoteMonitor), died with
	// reason (MONITOR_P_EXIT). Called by the finaliser, once per monitor.
	MonitorExitRemote(target, watcher Pid, ref Ref, reason Reason)
	// NodeName is this node's name: a monitor by name "on" it is local.
	NodeName() Atom
	// WatchRemote monitors the remote pid target for code outside the
	// System (System.Monitor): down runs once, on any goroutine, with the
	// target's exit reason, NoProc or NoConnection, unless cancel returned
	// true first. down must not block.
	WatchRemote(target Pid, down func(Reason)) (cancel func() bool)
}

// remoteWatch is System.Monitor of a remote pid.
func (sys *System) remoteWatch(pid Pid) (*Watch, error) {
	if sys.halt.Load() {
		return nil, ErrStopped
	}
	s := sys.signals()
	if s == nil {
		return nil, ErrNoRoute
	}
	w := newWatch()
	w.cancel = s.WatchRemote(pid, func(r Reason) {
		w.cell.fail(sys, &CallExitError{Reason: r})
	})
	return w, nil
}

// signals is the installed RemoteSignals route, or nil.
func (sys *System) signals() RemoteSignals {
	if b := sys.remote.Load(); b != nil {
		return b.s
	}
	return nil
}

// remoteLink is link for a remote b (Context.Link).
func (sys *System) remoteLink(a *proc, b Pid) error {
	s := sys.signals()
	if s == nil {
		return ErrNoRoute
	}
	s.LinkRemote(a.pid, b)
	return nil
}

// remoteUnlink is unlink for a remote b (Context.Unlink).
func (sys *System) remoteUnlink(a *proc, b Pid) {
	if s := sys.signals(); s != nil {
		s.UnlinkRemote(a.pid, b)
	}
}

// remoteExit is exitSignal for a remote to.
func (sys *System) remoteExit(from, to Pid, reason Reason) error {
	if sys.halt.Load() {
		return ErrStopped
	}
	s := sys.signals()
	if s == nil {
		return ErrNoRoute
	}
	return s.ExitRemote(from, to, reason)
}

// remoteMonitor is monitor for a remote target (Context.Monitor).
func (sys *System) remoteMonitor(watcher *proc, target Pid) (Ref, error) {
	s := sys.signals()
	if s == nil {
		return 0, ErrNoRoute
	}
	ref := sys.newRef()
	if !watcher.coldNode().node.AddWatching(uint64(ref), peer{pid: target}) {
		return ref, nil // killed meanwhile: nothing to watch for
	}
	s.MonitorRemote(watcher.pid, target, ref)
	sys.remoteMonitorPlaced(s, watcher, target, ref)
	return ref, nil
}

// remoteMonitorPlaced takes back a remote monitor whose watcher was killed
// while placing it. The finaliser takes the latch before it closes the
// node: if it closed the node after AddWatching, it found the watching
// entry and asked the route to demonitor, maybe before the route had
// recorded the monitor; the latch, set by then, sends us to demonitor
// again (DemonitorRemote of a ref already removed is a no-op).
func (sys *System) remoteMonitorPlaced(s RemoteSignals, watcher *proc, target Pid, ref Ref) {
	if watcher.exit.Load() != alive {
		s.DemonitorRemote(watcher.pid, target, ref)
	}
}

// MonitorNameAt monitors the actor registered as name on node, as
// erlang:monitor(process, {Name, Node}) does: the name is resolved on node
// when the monitor arrives there. Its Down has Name and Node set (and the
// zero Pid); an unknown name gives a Down with reason NoProc, a node that
// cannot be reached, or whose connection is lost, one with NoConnection.
// A node that is this System's own is MonitorName. Errors: ErrBadName for
// the empty name; ErrNoRoute without distribution; ErrNoProc if the caller
// has been killed while this handler runs.
func (c *Context) MonitorNameAt(name string, node Atom) (Ref, error) {
	p := c.proc()
	if c.orphan() {
		return 0, ErrNoProc
	}
	if name == "" {
		return 0, ErrBadName
	}
	sys := c.w.sys
	s := sys.signals()
	if s == nil {
		return 0, ErrNoRoute
	}
	if node == s.NodeName() {
		return c.MonitorName(name)
	}
	ref, at, placed, err := sys.watchNode(p, node)
	if err != nil || !placed {
		return ref, err
	}
	s.MonitorRemoteName(p.pid, name, node, ref)
	sys.remoteMonitorPlaced(s, p, at, ref)
	return ref, nil
}

// watchNode records in p's record a monitor whose target is known only by
// its node (a monitor by name, or a spawn's monitor before the reply): the
// watching entry names node by the pid that stands for it (ID and Serial
// 0, creation 0), which is remote, so the finaliser and Demonitor hand it
// to the route, which knows the monitor by its ref. placed is false if p
// died meanwhile (nothing to watch for); err is RemotePid's.
func (sys *System) watchNode(p *proc, node Atom) (ref Ref, at Pid, placed bool, err error) {
	if at, err = RemotePid(RemoteID{Node: node}); err != nil {
		return 0, Pid{}, false, err
	}
	ref = sys.newRef()
	return ref, at, p.coldNode().node.AddWatching(uint64(ref), peer{pid: at}), nil
}

// remoteDemonitor is demonitor's step for a watching entry whose target is
// remote: true if the route removed an active monitor (no Down will come).
func (sys *System) remoteDemonitor(p *proc, target Pid, ref Ref) bool {
	if s := sys.signals(); s != nil {
		return s.DemonitorRemote(p.pid, target, ref)
	}
	return false
}

// remoteLinkDied, remoteWatcherNotify and remoteWatchDropped hand the
// finaliser's remote entries to the route: the link exit signals, the
// monitors remote watchers held on the dying actor, and the monitors it
// held on remote actors. Called by finalise for the entries whose peer is
// remote, links first.
func (sys *System) remoteLinkDied(from, to Pid, reason Reason) {
	if s := sys.signals(); s != nil {
		s.LinkExitRemote(from, to, reason)
	}
}

func (sys *System) remoteWatcherNotify(target, watcher Pid, ref Ref, reason Reason) {
	if s := sys.signals(); s != nil {
		s.MonitorExitRemote(target, watcher, ref, reason)
	}
}

func (sys *System) remoteWatchDropped(watcher, target Pid, ref Ref) {
	if s := sys.signals(); s != nil {
		s.DemonitorRemote(watcher, target, ref)
	}
}

// Entry points for package dist: what arrives from a peer. Not for user
// code: each keeps the invariants above only when called by the route that
// keeps the protocol's state.

// AddRemoteLink records the half of a link between the local actor local
// and the remote pid remote in local's record. It reports false if local
// is not a live actor of sys (a LINK to it is answered with noproc). A half
// already there is left as it is (true).
func (sys *System) AddRemoteLink(local, remote Pid) bool {
	p, err := sys.lookup(local)
	if err != nil || !remote.IsRemote() {
		return false
	}
	return p.coldNode().addLink(remote)
}

// RemoveRemoteLink removes local's half of its link to remote and reports
// whether there was one. No exit signal is delivered.
func (sys *System) RemoveRemoteLink(local, remote Pid) bool {
	p := sys.procOf(local)
	if p == nil {
		return false
	}
	cs := p.cold.Load()
	return cs != nil && cs.node.RemoveLink(peer{pid: remote})
}

// HasRemoteLink reports whether local holds a half of a link to remote.
func (sys *System) HasRemoteLink(local, remote Pid) bool {
	p := sys.procOf(local)
	if p == nil {
		return false
	}
	cs := p.cold.Load()
	return cs != nil && cs.node.HasLink(peer{pid: remote})
}

// RemoteLinkExit is the exit signal of a link from the remote pid from to
// the local actor to: from died with reason, or the connection to its node
// was lost (NoConnection), or a LINK to it was answered noproc. If to holds
// the half, it is removed and the signal acts as a link exit signal does
// (monitor.Route: an Exit message for a trapping actor; Normal ignored
// otherwise; any other reason, kill included, kills it with that reason).
// If not (to unlinked, or died, or the signal was acted on already), it is
// dropped. It may run the finalisers of the actors it kills (and of those
// their links kill) on the caller's goroutine.
func (sys *System) RemoteLinkExit(from, to Pid, reason Reason) {
	if reason == nil {
		reason = Normal
	}
	q := sys.procOf(to)
	if q == nil {
		return
	}
	cs := q.cold.Load()
	if cs == nil {
		return
	}
	var jobs []exitJob
	cs.node.RemoveLinkThen(peer{pid: from}, func() {
		jobs = sys.linkSignal(nil, from, q, reason, jobs)
	})
	for len(jobs) > 0 {
		j := jobs[len(jobs)-1]
		jobs = jobs[:len(jobs)-1]
		jobs = sys.finalise(nil, j.p, j.reason, jobs)
	}
}

// RemoteExit is erlang:exit(To, Reason) sent by the remote pid from to the
// local actor to (EXIT2): as Exit, with Kill untrappable and Normal
// ignored by an actor that does not trap exits. A dead or unknown target:
// nothing happens.
func (sys *System) RemoteExit(from, to Pid, reason Reason) {
	sys.exitSignal(nil, from, to, reason)
}

// AddRemoteMonitor records a monitor that the remote pid watcher holds on
// the local actor target and returns its local ref; when target dies the
// finaliser passes the ref to MonitorExitRemote. ok is false if target is
// not a live actor of sys (the monitor is answered with noproc).
func (sys *System) AddRemoteMonitor(target, watcher Pid) (ref Ref, ok bool) {
	p, err := sys.lookup(target)
	if err != nil || !watcher.IsRemote() {
		return 0, false
	}
	ref = sys.newRef()
	if !p.coldNode().node.AddMonitor(uint64(ref), peer{pid: watcher}) {
		return 0, false
	}
	return ref, true
}

// AddSpawnMonitor records, in the record of the local actor watcher, a
// monitor of the actor that node is asked to spawn for it (spawn_monitor/4:
// a spawn request with the monitor option), and returns its ref. The peer
// makes its half with the child, before the child runs, so the Down carries
// the child's own reason however soon it dies; the route learns the
// child's pid from the reply and keeps the monitor by ref from then on.
// Until then the record names node by the pid that stands for it, as a
// monitor by name does, so a Demonitor or the watcher's death reaches the
// route. ok is false if watcher is not a live actor of sys. A spawn that
// fails takes the record back with DropSpawnMonitor.
func (sys *System) AddSpawnMonitor(watcher Pid, node Atom) (ref Ref, ok bool) {
	p, err := sys.lookup(watcher)
	if err != nil {
		return 0, false
	}
	ref, _, placed, err := sys.watchNode(p, node)
	if err != nil || !placed {
		return 0, false
	}
	return ref, true
}

// DropSpawnMonitor removes the record AddSpawnMonitor made, for a spawn
// that made no child: no Down will come for ref.
func (sys *System) DropSpawnMonitor(watcher Pid, ref Ref) {
	if p := sys.procOf(watcher); p != nil {
		if cs := p.cold.Load(); cs != nil {
			cs.node.RemoveWatching(uint64(ref))
		}
	}
}

// RemoveRemoteMonitor removes the monitor ref that AddRemoteMonitor placed
// on target (DEMONITOR_P, or the loss of the watcher's connection) and
// reports whether it was there.
func (sys *System) RemoveRemoteMonitor(target Pid, ref Ref) bool {
	p := sys.procOf(target)
	if p == nil {
		return false
	}
	cs := p.cold.Load()
	return cs != nil && cs.node.RemoveMonitor(uint64(ref))
}

// RemoteDown delivers d, the Down of a monitor the local actor watcher
// holds on a remote pid or name (d.Ref is the ref MonitorRemote was
// given), past the mailbox bound as every Down is. The route calls it once
// per monitor, after removing the monitor from its table; a dead watcher
// drops it.
func (sys *System) RemoteDown(watcher Pid, d Down) {
	if d.Reason == nil {
		d.Reason = Normal
	}
	if p := sys.procOf(watcher); p != nil {
		sys.deliver(nil, p, d)
	}
}

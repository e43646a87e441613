package actor

import (
	"sync"
	"sync/atomic"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/monitor"
	"github.com/colonyrt/colony/slot"
)

// peer is what a link or monitor record points at: an actor, or (for the
// monitor a call places on its callee) the call's reply cell.
type peer struct {
	pid  Pid
	call *replyCell
}

// coldState is an actor's cold lifecycle data, allocated on first use.
// Lock order (docs/locking.md): coldState.mu is held only while calling into
// the registry (which makes registration atomic with death); monitor.Node's
// mutex is held with no other lock but the other Node's of a link (Link and
// Unlink hold both, in address order); no two actors' coldState.mu are ever
// held together.
type coldState struct {
	node monitor.Node[peer]

	mu        sync.Mutex            // guards the fields below
	dead      bool                  // set at finalisation; later additions fail
	name      string                // registered name, if any
	joined    bool                  // has joined a process group
	groupMons bool                  // has monitored a process group (MonitorGroup)
	held      map[*heldRes]struct{} // resources closed at death (Hold)
}

// deadCold is the cold state of every actor that died without one. The
// finaliser installs it (CAS nil -> &deadCold) so that no cold state can be
// created after the death was collected: without it, a Link, Monitor or
// Register racing the death of an actor that had no cold state would create
// a fresh, open record that no finaliser ever closes (a lost exit signal, a
// lost Down, a name that never vanishes). It is shared and immutable in
// effect: dead is set and the node is closed, so every Add fails and every
// writer of its fields checks dead first under mu.
var deadCold = func() *coldState {
	cs := &coldState{dead: true}
	cs.node.Close()
	return cs
}()

// coldNode returns p's cold state, creating it on first use. After p's
// death it returns p's closed record or deadCold, never an open one.
func (p *proc) coldNode() *coldState {
	if cs := p.cold.Load(); cs != nil {
		return cs
	}
	cs := &coldState{}
	if p.cold.CompareAndSwap(nil, cs) {
		return cs
	}
	return p.cold.Load()
}

func (cs *coldState) addLink(pid Pid) bool { return cs.node.AddLink(peer{pid: pid}) }

// kindOf maps a reason onto monitor.Route's classification.
func kindOf(r Reason) monitor.Kind {
	if a, ok := r.(Atom); ok {
		switch a {
		case Normal:
			return monitor.Normal
		case Kill:
			return monitor.Kill
		}
	}
	return monitor.Other
}

type exitJob struct {
	p      *proc
	reason Reason
}

// terminate makes p exit with reason, from any goroutine (w is the caller's
// worker, nil outside the system). The first caller wins (exit 0->1) and
// finalises: the rest of the system sees the death at once, even if p's
// handler is still running. Exits caused by links are processed iteratively,
// so a long link chain cannot overflow the stack. Reports whether this call
// won.
func (sys *System) terminate(w *worker, p *proc, reason Reason) bool {
	if !p.exit.CompareAndSwap(alive, finalising) {
		return false
	}
	if reason == nil {
		reason = Normal // a nil reason is Normal everywhere (Reason)
	}
	jobs := []exitJob{{p, reason}}
	for len(jobs) > 0 {
		j := jobs[len(jobs)-1]
		jobs = jobs[:len(jobs)-1]
		jobs = sys.finalise(w, j.p, j.reason, jobs)
	}
	return true
}

// finalise does the exit of p, whose exit latch the caller holds: timers,
// registry, held resources, links, monitors — each notified exactly once —
// then publishes finalised and wakes p so an owner reclaims the slot. Peers
// that must die in turn are appended to jobs (with their latch taken).
func (sys *System) finalise(w *worker, p *proc, reason Reason, jobs []exitJob) []exitJob {
	pid := p.pid
	sys.obs.exited(w, reason) // exits by reason class (observe.go)
	// Timers destined here die with it (Erlang cancels timers whose
	// destination is a pid when that process exits). Dekker with armTo
	// (timer.go, "Destination timers"): our latch is taken, so either we see
	// the flag or armTo sees the latch.
	if p.flags.has(flagTimers) {
		sys.tm.cancelDest(sys, p)
	}
	cs := p.cold.Load()
	if cs == nil && !p.cold.CompareAndSwap(nil, deadCold) {
		cs = p.cold.Load() // created meanwhile: collect it
	}
	if cs != nil {
		cs.mu.Lock()
		cs.dead = true
		name, groups := cs.name, cs.joined || cs.groupMons
		cs.name = ""
		cs.mu.Unlock()
		// 1. The name vanishes with the actor; so do its group joins (each
		// monitor of the group is told one leave per join) and its group
		// monitors. Only an actor that joined or monitored a group takes
		// the groups' lock here.
		if name != "" {
			sys.nm.unregisterPid(name, pid)
		}
		if groups {
			sys.nm.groups.RemoveAll(pid)
		}
		sys.closeHeld(cs)
		// 2. Links, monitors, and the monitors p held on others. Links
		// first: OTP's exiting process sends its links' exit signals before
		// its monitors' DOWNs, so a peer that both links and monitors it
		// has the 'EXIT' in its mailbox before the DOWN, and a call to it
		// from a linked trapping caller fails only once the 'EXIT' is
		// there (tests/testdata/erlang/links/link_monitor_order,
		// gen_server/call_linked_stops). The Downs used to go first.
		links, mons, watching := cs.node.Close()
		for _, wt := range watching {
			if t := sys.procOf(wt.Target.pid); t != nil {
				if tcs := t.cold.Load(); tcs != nil {
					tcs.node.RemoveMonitor(wt.Ref)
				}
			} else if wt.Target.pid.IsRemote() {
				sys.remoteWatchDropped(pid, wt.Target.pid, Ref(wt.Ref)) // remote_signal.go
			}
		}
		for _, l := range links {
			q := sys.procOf(l.pid)
			if q == nil {
				if l.pid.IsRemote() {
					sys.remoteLinkDied(pid, l.pid, reason) // remote_signal.go
				}
				continue
			}
			qcs := q.cold.Load()
			if qcs == nil {
				continue
			}
			// The half removed and the signal delivered under q's node
			// lock (monitor/node.go, "The exit signal"): an Unlink by q
			// that finds the link gone returns after the signal, as
			// unlink/1 promises. Removed, then delivered after the lock
			// was released, the signal could reach q after its Unlink had
			// returned (TestUnlinkWaitsForLinkSignalInFlight).
			// If the half is gone, the peer unlinked us, or died, meanwhile.
			qcs.node.RemoveLinkThen(peer{pid: pid}, func() {
				if h := testHookLinkSignal.Load(); h != nil {
					(*h)(pid, q.pid)
				}
				jobs = sys.linkSignal(w, pid, q, reason, jobs)
			})
		}
		for _, m := range mons {
			if m.Watcher.call != nil {
				// OTP exits the caller with the callee's exit reason, not
				// noproc (tests/testdata/erlang/gen_server/call_server_*).
				m.Watcher.call.fail(sys, &CallExitError{Reason: reason})
				continue
			}
			if wp := sys.procOf(m.Watcher.pid); wp != nil {
				sys.deliver(w, wp, Down{Ref: Ref(m.Ref), Pid: pid, Reason: reason})
			} else if m.Watcher.pid.IsRemote() {
				sys.remoteWatcherNotify(pid, m.Watcher.pid, Ref(m.Ref), reason) // remote_signal.go
			}
		}
	}
	// Release: everything above is visible to the owner that loads finalised.
	p.exit.Store(finalised)
	if p.slot.Word.WakeAny(pid.gen) == slot.Enqueue {
		sys.ready(w, pid, false)
	}
	return jobs
}

// testHookLinkSignal, if set, runs in a finaliser that has taken the link
// from a dying actor to a survivor, before the survivor is signalled (under
// the survivor's node lock).
var testHookLinkSignal atomic.Pointer[func(from, to Pid)]

// linkSignal delivers the exit signal of a linked actor's death to q. It
// runs under q's node lock, so it only queues: a push, a wake, a latch.
func (sys *System) linkSignal(w *worker, from Pid, q *proc, reason Reason, jobs []exitJob) []exitJob {
	act := monitor.Route(monitor.Signal{Kind: kindOf(reason), Link: true}, q.flags.has(flagTrap), false)
	switch act {
	case monitor.DeliverExit:
		sys.deliver(w, q, Exit{From: from, Reason: reason})
	case monitor.Die, monitor.DieKilled:
		r := reason
		if act == monitor.DieKilled {
			r = Killed
		}
		if q.exit.CompareAndSwap(alive, finalising) {
			jobs = append(jobs, exitJob{q, r})
		}
	}
	return jobs
}

// exitSignal is erlang:exit(To, Reason) sent by from (the zero Pid from
// outside the system).
func (sys *System) exitSignal(w *worker, from, to Pid, reason Reason) error {
	if reason == nil {
		reason = Normal // a nil reason is Normal everywhere (Reason)
	}
	if to.IsRemote() {
		return sys.remoteExit(from, to, reason) // remote_signal.go
	}
	p, err := sys.lookup(to)
	if err != nil {
		if err == ErrNoProc {
			return nil // as in Erlang: an exit signal to a dead process is a no-op
		}
		return err
	}
	act := monitor.Route(monitor.Signal{Kind: kindOf(reason)}, p.flags.has(flagTrap), from == to)
	switch act {
	case monitor.DeliverExit:
		sys.deliver(w, p, Exit{From: from, Reason: reason})
	case monitor.Die:
		sys.terminate(w, p, reason)
	case monitor.DieKilled:
		sys.terminate(w, p, Killed)
	}
	return nil
}

// procOf returns the proc named by pid if it is the slot's current tenant
// (dead or alive), else nil.
func (sys *System) procOf(pid Pid) *proc {
	if pid.node != sys.node {
		return nil
	}
	sl := sys.slab.At(pid.idx)
	if sl == nil {
		return nil
	}
	if p := sl.Rec(); p != nil && p.pid == pid {
		return p
	}
	return nil
}

// Exit sends an exit signal with reason to pid from outside the system (the
// signal's From is the zero Pid), as erlang:exit/2: Kill kills untrappably;
// a trapping actor gets an Exit message; Normal (or nil, which is Normal)
// is ignored by a non-trapping actor; any other reason kills a non-trapping
// actor with that reason. An exit signal to a dead actor is a no-op; a
// malformed pid is ErrBadPid.
func (sys *System) Exit(pid Pid, reason Reason) error {
	return sys.exitSignal(nil, Pid{}, pid, reason)
}

// link links a (the caller, alive) and b. If b is dead, the caller gets the
// noproc exit signal of a link to a dead process and ErrNoProc, unless a
// still holds a link to b: then b's exit signal is on its way and the call
// is a no-op (link/1 of an existing link).
//
// Both halves are made in one step, monitor.Link, under both node locks, so
// that a racing Unlink by b cannot leave one half behind (made a then b,
// each under its own lock, interleaved with b's unlink of a then b, it
// could). The step is also what resolves the deaths it races,
// without undo: each finaliser closes its node before it walks its links.
//   - b dying: if b's Close comes after the step, it returns a, and b's
//     finaliser removes a's half and signals a; if before, the step reports
//     PeerDead and we report noproc.
//   - a killed (Link runs in a's handler, so only by another actor): if a's
//     Close comes after the step, a's finaliser finds b's half and signals
//     b (the link came first); if before, the step reports SelfDead and
//     nothing was made (the kill came first).
func (sys *System) link(w *worker, a *proc, b Pid) error {
	if b == a.pid {
		return nil // linking to oneself is a no-op
	}
	if b.IsRemote() {
		return sys.remoteLink(a, b) // remote_signal.go
	}
	q, err := sys.lookup(b)
	if err != nil {
		if err == ErrNoProc {
			if cs := a.cold.Load(); cs != nil && cs.node.HasLink(peer{pid: b}) {
				// Linked already, and b is dying: its finaliser, between
				// the latch and the removal of our half, will signal us
				// (it cannot skip us: a's record is published). An existing
				// link makes link/1 a no-op; a noproc here would be a
				// second exit message for one linked death.
				return nil
			}
			sys.linkDead(w, a, b)
		}
		return err
	}
	switch monitor.Link(&a.coldNode().node, peer{pid: a.pid}, &q.coldNode().node, peer{pid: b}) {
	case monitor.SelfDead:
		return ErrNoProc // the caller itself is exiting
	case monitor.PeerDead:
		sys.linkDead(w, a, b) // b died between the lookup and now
		return ErrNoProc
	}
	return nil
}

// linkDead is the noproc link signal a link to a dead process produces.
func (sys *System) linkDead(w *worker, a *proc, b Pid) {
	if a.flags.has(flagTrap) {
		sys.deliver(w, a, Exit{From: b, Reason: NoProc})
	}
}

// unlink removes the link between a (the caller, not orphaned when it
// called) and b, both halves in one step, monitor.Unlink; the step is the
// unlink's linearization point. If a's node is closed by then, a was killed
// meanwhile and the kill came first: the step changes nothing, and a's
// finaliser, which took the link at its Close, removes b's half and signals
// b (removing b's half regardless would race that finaliser and swallow
// the signal). A kill before the call is Context.Unlink's
// orphan check: the finaliser takes the latch before it closes the node, so
// only that check keeps an orphaned handler's unlink out of the window
// between them. A kill during the call may still land the step in that
// window, before the Close: the unlink takes effect and no signal goes out,
// which OTP allows for a kill and an unlink that overlap.
//
// By the pair invariant (monitor/node.go), a half on one side implies one on
// the other while both are open, so a missing record means no link:
//   - a without cold state has never linked;
//   - b without cold state holds no half, hence a holds none to b;
//   - b's slot no longer holding b: b was finalised, and its finaliser
//     removed a's half before the slot could be reclaimed.
func (sys *System) unlink(a *proc, b Pid) {
	acs := a.cold.Load()
	if acs == nil {
		return
	}
	q := sys.procOf(b)
	if q == nil {
		return
	}
	qcs := q.cold.Load()
	if qcs == nil {
		return
	}
	monitor.Unlink(&acs.node, peer{pid: a.pid}, &qcs.node, peer{pid: b})
}

// monitor makes watcher monitor target. A dead target (or one that dies
// before the monitor is recorded on it) yields Down{noproc} at once.
func (sys *System) monitor(w *worker, watcher *proc, target Pid) (Ref, error) {
	if target.IsRemote() {
		return sys.remoteMonitor(watcher, target) // remote_signal.go
	}
	q, err := sys.lookup(target)
	if err == ErrBadPid {
		return 0, err
	}
	ref := sys.newRef()
	if target == watcher.pid {
		// erlang:monitor(process, self()) returns a ref and sets up
		// nothing (erts treats it as a no-op): no Down can come, and
		// demonitor of the ref says false with [info]
		// (tests/testdata/erlang/links/monitor_self). Colony used to
		// record a monitor of the actor on itself.
		return ref, nil
	}
	if err == nil && q.coldNode().node.AddMonitor(uint64(ref), peer{pid: watcher.pid}) {
		if !watcher.coldNode().node.AddWatching(uint64(ref), peer{pid: target}) {
			// The watcher was killed meanwhile: take the monitor back
			// (if the target's death got there first, its Down goes to a
			// dead mailbox and is dropped).
			q.coldNode().node.RemoveMonitor(uint64(ref))
		}
		return ref, nil
	}
	// Dead already: Down with noproc at once.
	sys.deliver(w, watcher, Down{Ref: ref, Pid: target, Reason: NoProc})
	return ref, nil
}

// demonitor is erlang:demonitor(Ref, [info | flush]) run by p, the monitor's
// owner (the caller, on its own worker's node cache nc). A Down for ref
// already delivered to p's mailbox stays there unless flush removes it; one
// produced but not yet delivered (the target's finaliser is between
// collecting the monitor and pushing the Down) is dropped on arrival. It
// reports whether the monitor was removed before its Down was delivered:
// true means p never sees a Down for ref (OTP's info result).
//
// "Delivered" is decided by pulling p's mailbox into the save queue, as a
// selective receive that matches nothing would: a Down the pull did not find
// had not been pushed (or was mid-push) when Demonitor ran.
func (sys *System) demonitor(p *proc, nc *mailbox.Cache, ref Ref, flush bool) bool {
	cs := p.cold.Load()
	if cs == nil {
		return false // never monitored anything: ref is unknown
	}
	target, watched := cs.node.RemoveWatching(uint64(ref))
	if watched && target.pid.IsRemote() && sys.remoteDemonitor(p, target.pid, ref) {
		return true // active on the peer: no Down was produced (remote_signal.go)
	}
	if watched {
		if q := sys.procOf(target.pid); q != nil {
			if qcs := q.cold.Load(); qcs != nil && qcs.node.RemoveMonitor(uint64(ref)) {
				return true // active: no Down was produced
			}
		}
		// The target's death collected the monitor: its Down is in p's
		// mailbox, or on its way.
	}
	// watched false: ref was never p's, was demonitored already, or its Down
	// has been taken out of the mailbox (accept removes the watching entry)
	// or was delivered at Monitor time (noproc); it can only be in the save
	// queue or gone, never still to come.
	e := p.x()
	p.pullMailbox(sys, nc)
	for i, m := range e.save {
		if d, ok := m.(Down); ok && d.Ref == ref {
			if flush {
				e.save = append(e.save[:i:i], e.save[i+1:]...)
			}
			return false
		}
	}
	if watched {
		// Produced but not delivered: drop it when it arrives.
		e.suppress(ref)
		return true
	}
	return false
}

// pullMailbox moves every message now in p's mailbox, in order, to the end
// of the save queue, with the bookkeeping of a selective receive (accept).
// The handler gets saved messages before newer ones, so nothing is
// reordered. Owner only.
func (p *proc) pullMailbox(sys *System, nc *mailbox.Cache) {
	e := p.x()
	for {
		m, ok := p.mbox.Pop(nc)
		if !ok {
			return
		}
		p.mbox.Consumed(1)
		if m, ok := p.accept(sys, m); ok {
			e.save = append(e.save, m)
		}
	}
}

package actor

import (
	"time"
)

// Context is an actor's handle on the runtime while one of its handlers
// runs. It is valid only inside that handler, on that goroutine: storing it
// or using it from another goroutine panics (a misuse) or acts for whatever
// actor the worker runs next. It may not be copied.
//
// If the actor is killed while its handler runs (Exit with Kill from
// another actor), the rest of the system sees it dead at once; everything
// the orphaned handler then does through its Context — sends, spawns,
// replies, links — is dropped and counted in Stats.Orphaned.
type Context struct {
	w *worker
	p *proc
	// inMatch: a Receive's match func is running (Context.matches). Worker
	// only, as the Context is: a handler that blocks keeps its worker.
	inMatch bool
}

func (c *Context) proc() *proc {
	if c == nil || c.p == nil {
		panic("actor: Context used outside its handler")
	}
	return c.p
}

// orphan reports (and counts) an operation by a handler whose actor has
// been killed.
func (c *Context) orphan() bool {
	if c.p.exit.Load() != alive {
		c.w.sys.orphaned.Add(1)
		return true
	}
	return false
}

// Self returns the actor's own pid.
func (c *Context) Self() Pid { return c.proc().pid }

// System returns the System the actor runs in. A handler uses it for what
// Context does not offer: Whereis, GroupMembers and WhichGroups, or
// JoinGroup of another actor. System's methods are safe in a handler, and
// a System.Send made by a handler is ordered with its Context.Sends to the
// same pid (the mailbox is one FIFO lane; only Context.Send's run-next hint
// is lost). System.Call and StartServer wait as a plain goroutine does,
// holding the scheduler role (see StartServer): from a handler use
// Context.Call and SpawnServer.
func (c *Context) System() *System { return c.w.sys }

// Send sends msg to pid (see System.Send). If this send wakes pid, pid runs
// next on this scheduler, in the rest of this actor's time slice.
func (c *Context) Send(pid Pid, msg any) error {
	c.proc()
	if c.orphan() {
		return nil
	}
	return c.w.sys.send(c.w, pid, msg)
}

// Spawn starts a child actor (see System.Spawn). The child's parent is the
// caller; unlike actors spawned from outside, it is not a root for
// Shutdown's ordered stop.
func (c *Context) Spawn(a Actor, opts ...SpawnOption) (Pid, error) {
	pid, _, err := c.spawnChild(a, opts, false, false)
	return pid, err
}

// SpawnLink spawns a child linked to the caller, atomically (Erlang's
// spawn_link): there is no moment where the child runs unlinked.
func (c *Context) SpawnLink(a Actor, opts ...SpawnOption) (Pid, error) {
	pid, _, err := c.spawnChild(a, opts, true, false)
	return pid, err
}

// SpawnMonitor spawns a child monitored by the caller, atomically (Erlang's
// spawn_monitor): the monitor exists before the child can run or be found,
// so a child that exits at once gives a Down with its own reason, never
// noproc.
func (c *Context) SpawnMonitor(a Actor, opts ...SpawnOption) (Pid, Ref, error) {
	return c.spawnChild(a, opts, false, true)
}

// spawnChild spawns a child of the caller, linked or monitored from birth
// as asked; the Ref is the monitor's.
func (c *Context) spawnChild(a Actor, opts []SpawnOption, link, monitor bool) (Pid, Ref, error) {
	p := c.proc()
	if c.orphan() {
		return Pid{}, 0, ErrNoProc
	}
	o := applySpawnOpts(opts)
	o.parent, o.link, o.monitor = p, link, monitor
	pid, err := c.w.sys.spawn(c.w, a, &o)
	if err != nil {
		return Pid{}, 0, err
	}
	return pid, o.ref, nil
}

// Stop ends the actor with reason once the current handler returns; no
// further message is handled. Stop(Normal) is a clean exit. If Stop is
// called again, the last call's reason is the one the actor exits with.
func (c *Context) Stop(reason Reason) {
	p := c.proc()
	p.stop = true
	if reason != nil && reason != Reason(Normal) {
		p.x().stopReason = reason
	} else if p.ext != nil {
		// Normal needs no record, but must replace an earlier Stop's
		// reason: a Server's Terminate that stops with Normal exits normal
		// (TestStopNormalInTerminateChangesReason).
		p.ext.stopReason = nil
	}
}

// Exit sends an exit signal to pid (erlang:exit/2). See System.Exit. Exit
// to the caller itself with a reason other than Normal or Kill behaves like
// a signal to any actor: it is delivered as a message if the caller traps
// exits.
func (c *Context) Exit(pid Pid, reason Reason) error {
	p := c.proc()
	if c.orphan() {
		return nil
	}
	return c.w.sys.exitSignal(c.w, p.pid, pid, reason)
}

// TrapExit sets whether exit signals to this actor become Exit messages
// (Erlang's process_flag(trap_exit, on)); it returns the previous setting.
// Kill cannot be trapped.
func (c *Context) TrapExit(on bool) bool {
	return c.proc().flags.set(flagTrap, on)
}

// Link links the actor to pid: when either dies abnormally the other gets
// an exit signal. Linking to oneself is a no-op. Linking to a dead pid
// returns ErrNoProc, and a trapping caller also receives Exit{pid, NoProc};
// but linking again to a linked pid is a no-op even if it has just died
// (its exit signal, not yet delivered, comes as for any linked death).
func (c *Context) Link(pid Pid) error {
	p := c.proc()
	if c.orphan() {
		return ErrNoProc
	}
	return c.w.sys.link(c.w, p, pid)
}

// Unlink removes a link, both ways. After Unlink returns, no exit signal
// caused by that link reaches the caller. Unlinking a pid that is not
// linked, or dead, is fine and returns nil (erlang:unlink/1 returns true);
// a malformed pid (the zero Pid, another System's) is ErrBadPid, as
// unlink/1 raises badarg for a non-pid. A handler orphaned by a kill cannot
// unlink: a dead actor's links deliver their exit signals.
func (c *Context) Unlink(pid Pid) error {
	p := c.proc()
	if c.orphan() {
		// Dead already: the finaliser owns the link and signals pid.
		// Without this check the unlink could win the race against the
		// finaliser, which has taken the latch but maybe not yet closed
		// the node, and swallow the signal.
		return nil
	}
	if pid.IsRemote() {
		c.w.sys.remoteUnlink(p, pid) // remote_signal.go
		return nil
	}
	if _, err := c.w.sys.lookup(pid); err == ErrBadPid {
		return err
	}
	c.w.sys.unlink(p, pid)
	return nil
}

// Monitor starts monitoring pid and returns the monitor's reference. When
// pid dies the actor receives exactly one Down with that reference; if pid
// is already dead, the Down (with reason NoProc) is delivered at once.
// Monitoring the caller itself returns a ref and sets up nothing, as
// erlang:monitor(process, self()) does: Demonitor of it is false.
func (c *Context) Monitor(pid Pid) (Ref, error) {
	p := c.proc()
	if c.orphan() {
		return 0, ErrNoProc
	}
	return c.w.sys.monitor(c.w, p, pid)
}

// Demonitor stops a monitor (erlang:demonitor/2). After it returns no Down
// for ref arrives any more. A Down for ref already in the mailbox stays
// there, as in Erlang, unless flush is set, which removes it too.
//
// The result is OTP's [info] answer, removedBeforeDown: true means the
// monitor was removed before its Down was delivered, so the actor never
// sees one; false means the Down is (or was) in the mailbox, or ref was not
// an active monitor of this actor. OTP's demonitor/1 and demonitor(Ref,
// [flush]) answer true whatever happened: code ported from them ignores the
// result, and Demonitor(ref, true) is demonitor(Ref, [flush]).
func (c *Context) Demonitor(ref Ref, flush bool) (removedBeforeDown bool) {
	p := c.proc()
	removed := c.w.sys.demonitor(p, c.w.cache(), ref, flush)
	if e := p.ext; e != nil && e.nameMons != nil {
		// demonitor pulled a delivered Down into the save queue, where
		// accept named it; one still to come is suppressed, and an
		// active monitor sends none: the name is needed no more.
		delete(e.nameMons, ref)
	}
	return removed
}

// Register registers the actor under name (see System.Register).
func (c *Context) Register(name string) error {
	return c.w.sys.Register(name, c.proc().pid)
}

// SetReceiveTimeout makes the actor receive a ReceiveTimeout message after
// each period of d without messages (0 turns it off). Negative d is an error.
func (c *Context) SetReceiveTimeout(d time.Duration) error {
	p := c.proc()
	if d < 0 {
		return ErrNegativeTimeout
	}
	e := p.x()
	e.recvTimeout = int64(d)
	e.idleSeq++
	c.w.sys.cancelTimer(e.idleTimer)
	e.idleTimer = timerRef{}
	return nil
}

// MessagesHandled returns how many messages this actor has taken from its
// mailbox (ActorInfo.Handled), the one being handled included.
func (c *Context) MessagesHandled() uint64 {
	return c.proc().mbox.Taken() + uint64(c.w.popped)
}

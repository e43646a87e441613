package actor

import (
	"errors"
	"time"
)

// Starts with an init acknowledgement for plain actors: proc_lib's
// start/start_link and init_ack. The starter spawns the actor with an ack
// record (ackTo) and waits as a server's starter does (awaitStart) for the
// ack, the actor's death or the timeout; the actor acknowledges with
// Context.InitAck whenever it is ready, in Init or in a later handler.

// initAck is a plain actor's pending acknowledgement. Owner only (procExt).
type initAck struct {
	ss      *startSync
	starter Pid    // the starting actor; zero for a start from outside
	name    string // the Name spawn option's name, released on a failed ack
}

// ackTo makes the spawned actor owe ss an InitAck.
func ackTo(ss *startSync, starter Pid, name string) SpawnOption {
	return func(o *spawnOpts) { o.ack = &initAck{ss: ss, starter: starter, name: name} }
}

// StartActor starts the plain actor a from outside the System
// (proc_lib:start) and waits until it acknowledges with Context.InitAck,
// dies, or timeout passes. It returns the pid once the actor has called
// InitAck(nil); a *StartError carrying the reason if the actor called
// InitAck with an error, died first (its exit reason), or timed out
// (Atom("timeout"); the actor is then killed); ErrNegativeTimeout,
// ErrNilSystem, or Spawn's errors. Its wait is a plain Go wait: from a
// handler use Context.StartLink.
func StartActor(sys *System, a Actor, timeout time.Duration, opts ...SpawnOption) (Pid, error) {
	if sys == nil {
		return Pid{}, ErrNilSystem
	}
	if timeout < 0 {
		return Pid{}, ErrNegativeTimeout
	}
	ss := &startSync{done: make(chan struct{})}
	w := newWatch()
	pid, err := sys.Spawn(a, append(opts[:len(opts):len(opts)], watchFromBirth(w), ackTo(ss, Pid{}, spawnName(opts)))...)
	if err != nil {
		return Pid{}, err
	}
	defer w.Stop()
	return sys.awaitStart(pid, ss, w, timeout)
}

// StartLink spawns a linked to the caller and waits for its InitAck
// (proc_lib:start_link), handing the scheduler role on while it waits;
// other messages stay in the caller's mailbox. Results as StartActor's; on
// a timeout the actor is unlinked and killed, so no Exit is left behind.
func (c *Context) StartLink(a Actor, timeout time.Duration, opts ...SpawnOption) (Pid, error) {
	if timeout < 0 {
		return Pid{}, ErrNegativeTimeout
	}
	ss := &startSync{}
	pid, ref, err := c.spawnChild(a, append(opts[:len(opts):len(opts)], ackTo(ss, c.Self(), spawnName(opts))), true, true)
	if err != nil {
		return Pid{}, err
	}
	started, err := c.awaitStart(pid, ref, ss, timeout)
	var se *StartError
	if errors.As(err, &se) && !ss.failed && se.Reason != Atom("timeout") {
		// Died before its ack: the start takes the link's Exit (queued
		// before the Down: links are signalled first), as
		// sync_start_link's receive of {'EXIT', Pid, R} does. A failed
		// ack leaves it, as OTP's ack-then-exit does.
		c.Receive(func(m any) bool { x, ok := m.(Exit); return ok && x.From == pid }, 0)
	}
	return started, err
}

// InitAck acknowledges the start StartActor or Context.StartLink waits for
// (proc_lib:init_ack): with nil the start returns the actor's pid; with an
// error it fails with a *StartError carrying StopReason(err), and the actor
// stops with that reason (proc_lib:init_fail), its Name released first so
// a start made at once can take it. It reports whether a start was owed an
// ack: false for an actor not started so, or one that has acked already.
func (c *Context) InitAck(err error) bool {
	p := c.proc()
	e := p.ext
	if e == nil || e.ack == nil {
		return false
	}
	a := e.ack
	e.ack = nil
	if err != nil {
		c.w.sys.releaseName(p, a.name)
		a.ss.failed, a.ss.reason = true, StopReason(err)
		a.ss.send(c, a.starter)
		c.Stop(a.ss.reason)
		return true
	}
	a.ss.send(c, a.starter)
	return true
}

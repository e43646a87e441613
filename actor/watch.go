package actor

import "errors"

// Watch is a monitor held by a goroutine outside the System: what
// erlang:monitor(process, Pid) gives a process, for code that is not an
// actor (main, an HTTP handler, a test). Make one with System.Monitor.
type Watch struct {
	target *proc // nil if the target was dead at Monitor
	ref    Ref
	cell   *replyCell
	cancel func() bool // a remote target's (remote_signal.go); else nil
}

// Monitor watches pid from outside the System. The Watch's Done channel is
// closed once pid has exited, and Reason then says why, as a Down would;
// a pid already dead gives a Watch that is done at once with reason
// NoProc, as a monitor of a dead process gives DOWN noproc. A remote pid
// is watched through distribution (RemoteSignals): its node's loss, or a
// node that cannot be reached, gives NoConnection. Errors: ErrBadPid for
// a malformed pid; ErrStopped after Shutdown; ErrNoRoute for a remote pid
// without distribution.
//
// Like an actor's monitor, a Watch costs a record on the target until the
// target exits or the Watch is stopped.
func (sys *System) Monitor(pid Pid) (*Watch, error) {
	if pid.IsRemote() {
		return sys.remoteWatch(pid) // remote_signal.go
	}
	if pid.node != sys.node || pid.IsZero() {
		return nil, ErrBadPid
	}
	if sys.halt.Load() {
		return nil, ErrStopped
	}
	w := newWatch()
	p, err := sys.lookup(pid)
	if err == nil {
		w.ref = sys.newRef()
		if p.coldNode().node.AddMonitor(uint64(w.ref), peer{call: w.cell}) {
			w.target = p
			return w, nil
		}
	} else if !errors.Is(err, ErrNoProc) {
		return nil, err
	}
	w.cell.fail(sys, &CallExitError{Reason: NoProc})
	return w, nil
}

// newWatch is a Watch of no actor yet.
func newWatch() *Watch {
	return &Watch{cell: &replyCell{done: make(chan struct{}), closeDone: true}}
}

// Done returns a channel closed once the watched actor has exited (at once
// if it was dead at Monitor). It is never closed after a Stop that
// returned true.
func (w *Watch) Done() <-chan struct{} { return w.cell.done }

// Reason is the watched actor's exit reason once Done is closed (NoProc if
// it was dead at Monitor), and nil before.
func (w *Watch) Reason() Reason {
	if w.cell.state.Load() != cellDone || w.cell.err == nil { // err is nil after a Stop
		return nil
	}
	var ce *CallExitError
	if errors.As(w.cell.err, &ce) {
		return ce.Reason
	}
	return NoProc
}

// Stop removes the Watch (erlang:demonitor). It reports whether it was
// removed before the actor's exit was seen: true means Done will never be
// closed; false means it is or will shortly be (the exit won), or the
// Watch was stopped already.
func (w *Watch) Stop() bool {
	if w.cancel != nil {
		return w.cancel() && w.cell.state.CompareAndSwap(cellPending, cellDone)
	}
	if w.target == nil {
		return false
	}
	cs := w.target.cold.Load()
	if cs == nil || !cs.node.RemoveMonitor(uint64(w.ref)) {
		return false
	}
	// The record is gone, so the finaliser cannot fail the cell; taking it
	// here makes a later Reason stay nil and keeps Done open.
	return w.cell.state.CompareAndSwap(cellPending, cellDone)
}

// SpawnMonitor spawns an actor watched from outside the System from its
// birth: erlang:spawn_monitor for code that is not an actor (main, an HTTP
// handler, a test). The Watch exists before the actor can run or be
// found, so an actor that exits at once gives its own reason, never the
// NoProc a Monitor taken after Spawn could report. Errors as Spawn's.
func (sys *System) SpawnMonitor(a Actor, opts ...SpawnOption) (Pid, *Watch, error) {
	w := newWatch()
	pid, err := sys.Spawn(a, append(opts[:len(opts):len(opts)], watchFromBirth(w))...)
	if err != nil {
		return Pid{}, nil, err
	}
	return pid, w, nil
}

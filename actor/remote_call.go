package actor

// Calls across nodes: the hooks distribution uses to carry gen_server calls.
//
// Design note.
//
// Problem. A call (call.go) is a reply cell that the callee's answer
// completes, watched by a monitor on the callee and bounded by a wheel
// timer. Across nodes, both ends change: a call that arrives from a peer
// has no local caller to wake (its answer must become a '$gen_call' reply
// on the wire), and a call to a remote pid has no local proc to monitor or
// to queue a Request on (the request, the monitor and the reply travel as
// terms, and package dist knows them, not actor).
//
// Rejected. (1) A proxy actor per node that makes local calls on the
// peer's behalf: every incoming call would cost an extra hop, and a
// blocked proxy would serialise unrelated callers. (2) A goroutine per
// incoming call waiting on the cell's done channel: it costs a goroutine
// for every call a server answers later. (3) An outgoing call that waits on
// a Go channel: a caller inside a handler would hold its scheduler role
// while it waits, which is what the wait/epoch machinery exists to avoid.
//
// Protocol. Two entry points, both costing local calls nothing:
//
//   - Incoming (SendRequest): the Request's cell carries a sink, a func the
//     answer runs instead of waking a caller (kept in the cell's val, which
//     such a cell never uses otherwise, so a local call's cell is no
//     larger). answer (call.go) hands a cell
//     with a sink to answerSink, which takes the cell with the same CAS a
//     local answer takes, so a Request is still answered at most once and
//     a second answer counts as late. No monitor and no timer are armed:
//     the remote caller monitors the callee itself and keeps its own
//     timeout, and a callee that dies without answering leaves the cell to
//     the garbage collector.
//   - Outgoing (Await, and Call on a remote pid): the caller's wait is the
//     one a local call makes (a cell with the caller's (pid, epoch), a wheel
//     timer that fails it with ErrTimeout), and what would complete it is
//     supplied by the remote route (RemoteCaller.StartCall): a reply, the
//     callee's Down, or the loss of its node, each through the done func,
//     whose cell CAS lets exactly one of them (or the timeout) win. When the
//     wait ends, however it ends (the caller's kill unwinds through it),
//     cancel runs once: the route drops the call's alias and monitor, so
//     that a reply that comes later finds nothing and is dropped. Nothing
//     reaches the caller's mailbox.
//
// Context.Call and System.Call reach the remote path only after lookup has
// refused the pid, so a local call pays nothing for it.

import (
	"context"
	"time"
)

// RemoteCaller is implemented by a Remote (see SetRemote) that can carry
// calls to remote pids: package dist's Node. Context.Call, System.Call and
// System.CallContext of a remote pid use it.
type RemoteCaller interface {
	// StartCall begins a call of the remote pid to with req on behalf of
	// from (the calling actor, or the zero Pid for a caller outside the
	// System). It arranges for done to run when the call ends: with the
	// reply, or with the error of the callee's death or of the loss of its
	// node. done may run on any goroutine, even before StartCall returns;
	// a run after the caller stopped waiting is ignored. cancel, if not
	// nil, runs once when the caller's wait has ended, whatever ended it.
	// It must not block.
	StartCall(from, to Pid, req any, done AwaitDone) (cancel func(), err error)
}

// Awaiter is implemented by *Context (a wait inside a handler, which hands
// the scheduler role on as Call does) and *System (a wait of a plain
// goroutine): what package dist takes for its calls by name on a node.
type Awaiter interface {
	Await(timeout time.Duration, start AwaitStart) (any, error)
}

// AwaitStart begins an operation that another goroutine completes (see
// Context.Await). self is the waiting actor (the zero Pid outside).
type AwaitStart func(self Pid, done AwaitDone) (cancel func(), err error)

// AwaitDone ends an awaited operation with (v, err). It reports whether it
// did: false if the wait had ended already (its timeout, an earlier done,
// its context, the caller's death), so that its caller can count what came
// too late. It may be called from any goroutine, any number of times.
type AwaitDone func(v any, err error) bool

// Await waits, as Call does, for an operation that another goroutine
// completes: start begins it and returns; the operation ends it by calling
// done (the first call ends it; later ones report false), or timeout passes
// first and Await returns ErrTimeout. cancel (start's result, if not nil) runs once when
// the wait has ended, however it ended, including the caller's kill. An
// error from start is returned at once (cancel is not run). Other actors
// keep running on this scheduler while the caller waits. It is the hook a
// package such as dist uses to give its own blocking operations (a call by
// name on another node) the caller's wait; a Call to a remote pid uses it.
func (c *Context) Await(timeout time.Duration, start AwaitStart) (any, error) {
	p := c.proc()
	if c.orphan() {
		return nil, ErrNoProc
	}
	if timeout < 0 {
		return nil, ErrNegativeTimeout
	}
	sys := c.w.sys
	epoch := c.beginWait()
	cell := &replyCell{caller: p.pid, epoch: epoch}
	cancel, err := start(p.pid, func(v any, err error) bool { return cell.complete(sys, nil, v, err) })
	if err != nil {
		p.slot.Word.BeginWait(p.pid.gen) // retire the wait, as Call does
		return nil, err
	}
	var tr timerRef
	if timeout != Infinity {
		tr = sys.tm.armWait(sys, p.pid, epoch, int64(timeout), nil, cell)
	}
	defer awaitEnd(sys, tr, cancel)
	for cell.state.Load() != cellDone {
		c.waitPark(false)
	}
	p.slot.Word.BeginWait(p.pid.gen) // retire the wait: later wakes for it are stale
	return cell.val, cell.err
}

// Await is Context.Await for a caller outside the System (a plain
// goroutine), which blocks.
func (sys *System) Await(timeout time.Duration, start AwaitStart) (any, error) {
	if timeout < 0 {
		return nil, ErrNegativeTimeout
	}
	return sys.awaitOutside(context.Background(), timeout, start)
}

// awaitOutside is the wait of System.Await and CallContext: until done,
// the timeout or ctx (context.Background: none).
func (sys *System) awaitOutside(ctx context.Context, timeout time.Duration, start AwaitStart) (any, error) {
	cell := &replyCell{done: make(chan struct{}, 1)}
	cancel, err := start(Pid{}, func(v any, err error) bool { return cell.complete(sys, nil, v, err) })
	if err != nil {
		return nil, err
	}
	var tr timerRef
	if timeout != Infinity {
		tr = sys.tm.armWait(sys, Pid{}, 0, int64(timeout), nil, cell)
	}
	defer awaitEnd(sys, tr, cancel)
	select {
	case <-cell.done:
	case <-ctx.Done(): // nil, never ready, for context.Background
		cell.complete(sys, nil, nil, ctxErr(ctx)) // unless the reply won
		<-cell.done
	}
	return cell.val, cell.err
}

func awaitEnd(sys *System, tr timerRef, cancel func()) {
	sys.cancelTimer(tr)
	if cancel != nil {
		cancel()
	}
}

// remoteCaller is the installed route's call support, or ErrNoRoute.
func (sys *System) remoteCaller() (RemoteCaller, error) {
	if sys.halt.Load() {
		return nil, ErrStopped
	}
	b := sys.remote.Load()
	if b == nil {
		return nil, ErrNoRoute
	}
	rc, ok := b.r.(RemoteCaller)
	if !ok {
		return nil, ErrNoRoute
	}
	return rc, nil
}

// callRemote is Context.Call of a remote pid (its slow path: lookup
// refused the pid).
func (c *Context) callRemote(pid Pid, req any, timeout time.Duration) (any, error) {
	rc, err := c.w.sys.remoteCaller()
	if err != nil {
		return nil, err
	}
	v, err := c.Await(timeout, func(self Pid, done AwaitDone) (func(), error) {
		return rc.StartCall(self, pid, req, done)
	})
	return v, c.w.sys.callErr(err, pid, req, timeout)
}

// callRemote is System.Call and CallContext of a remote pid.
func (sys *System) callRemote(ctx context.Context, pid Pid, req any, timeout time.Duration) (any, error) {
	rc, err := sys.remoteCaller()
	if err != nil {
		return nil, err
	}
	v, err := sys.awaitOutside(ctx, timeout, func(_ Pid, done AwaitDone) (func(), error) {
		return rc.StartCall(Pid{}, pid, req, done)
	})
	return v, sys.callErr(err, pid, req, timeout)
}

// SendRequest delivers a call that came from outside this System's actors
// (a '$gen_call' from a peer node) to the actor to, as a Request whose
// From is from: the actor (a Server's HandleCall, or a Receive that takes
// Requests) answers it as any call, now or later, with Reply or
// ReplyError, and answer runs with that answer, once, on the answering
// goroutine (it must not block). A second answer is late, as for a local
// call. The call has no timeout and no monitor here: the caller keeps
// both. Errors: ErrNoProc if to is dead (answer never runs), ErrBadPid,
// ErrMailboxFull.
func (sys *System) SendRequest(to, from Pid, msg any, answer func(v any, err error)) error {
	if answer == nil {
		panic("actor: SendRequest with a nil answer func")
	}
	if _, err := sys.lookup(to); err != nil {
		return err // not sent: a remote pid must not go back out
	}
	return sys.send(nil, to, Request{Msg: msg, from: from, cell: &replyCell{sink: true, val: answer}})
}

// answerSink is answer's path for a cell with a sink (SendRequest): the
// first answer takes the cell and runs the sink; a later one is late.
func (sys *System) answerSink(cell *replyCell, v any, err error) bool {
	f, _ := cell.val.(func(any, error))
	if f == nil || !cell.state.CompareAndSwap(cellPending, cellDone) {
		sys.lateReplies.Add(1)
		return false
	}
	f(v, err)
	return true
}

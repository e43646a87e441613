package actor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/slot"
)

// Calls (gen_server:call). The caller creates a reply cell, monitors the
// callee with a monitor whose "watcher" is the cell (so the callee's death
// fails the call at once with ErrNoProc, as OTP's call does with its
// monitor), sends a Request carrying the cell, arms its timeout, and waits.
// The reply is written into the cell, never into the caller's mailbox: a
// reply that arrives after a timeout loses the cell's CAS and is dropped, so
// no stray reply can ever surface in the caller's mailbox.

const (
	cellPending uint32 = iota
	cellWriting
	cellDone
)

type replyCell struct {
	state atomic.Uint32 // pending -> writing -> done, by whoever completes first
	// closeDone: completion closes done instead of sending on it (a Watch's
	// cell, whose Done may have many receivers). Immutable.
	closeDone bool
	// sink: the answer goes to a func, held in val, instead of a waiter
	// (a call from another node: remote_call.go). Immutable.
	sink bool
	val  any // written before state=done (Release), read after (Acquire)
	err  error

	// The waiter: an actor (caller, epoch) or a goroutine outside (done).
	caller Pid
	epoch  uint32
	done   chan struct{}
}

// complete ends the call with (v, err) unless it already ended; it wakes the
// waiter. w is the completing worker (nil if none) for wake locality.
func (r *replyCell) complete(sys *System, w *worker, v any, err error) bool {
	if !r.state.CompareAndSwap(cellPending, cellWriting) {
		return false
	}
	r.val, r.err = v, err
	r.state.Store(cellDone)
	if r.done != nil {
		if sys.cfg.det != nil {
			sys.detHold(r.detWake) // held to the step's end (det.go)
			return true
		}
		if r.closeDone {
			close(r.done)
		} else {
			r.done <- struct{}{} // the one send on done: only the CAS winner gets here
		}
		return true
	}
	if p := sys.procOf(r.caller); p != nil && p.slot.Word.Wake(r.caller.gen, r.epoch) == slot.Enqueue {
		sys.ready(w, r.caller, true)
	}
	return true
}

func (r *replyCell) fail(sys *System, err error) { r.complete(sys, nil, nil, err) }

// Request is the message a called actor receives. Answer it with
// Context.Reply or ReplyError (now, or later from another message: keep
// the Request) or System.Reply or ReplyError (from any goroutine). A
// Request may be copied; it must be answered at most once — later answers
// are ignored.
//
// A Request may be handed to another actor to answer (a pool's manager
// routing calls to its workers). The caller watches only the actor it
// called: if the one the Request was handed to dies without answering,
// the caller waits until its timeout, as with gen_server:reply/2 in OTP.
// So whoever hands a Request on answers for the receiver's death (monitor
// it and ReplyError). And a reply is a message like any other: it is not
// ordered with the messages the answering actor sends to others (to the
// manager, say, that it is done), except as in guarantees.md's causal
// order.
type Request struct {
	Msg  any
	from Pid
	cell *replyCell
}

// From returns the caller's pid (the zero Pid for a caller outside the
// system).
func (r Request) From() Pid { return r.from }

// String formats r for people: "call from <node.index.generation>: msg", or
// "call from outside: msg" for a caller outside the System. (Its reply
// cell is internal: printed as a struct, a Request showed an address.)
func (r Request) String() string {
	from := "outside"
	if !r.from.IsZero() {
		from = r.from.String()
	}
	return fmt.Sprintf("call from %s: %v", from, r.Msg)
}

// Waiting reports whether req's caller still waits for the reply: false
// once the call has ended (answered, timed out, its context done, or its
// caller dead). A server can check it before costly work for a caller that
// has given up (OTP's server would monitor the caller; a caller outside the
// System has no pid to monitor). It is a snapshot: the call may end just
// after it reports true.
func (sys *System) Waiting(req Request) bool {
	c := req.cell
	if c == nil || c.state.Load() != cellPending {
		return false
	}
	return c.done != nil || c.sink || sys.Alive(c.caller) // done, sink: a caller outside
}

// Waiting reports whether req's caller still waits; see System.Waiting.
func (c *Context) Waiting(req Request) bool { return c.w.sys.Waiting(req) }

// Reply answers a call (gen_server:reply/2). It reports whether the reply
// was taken: false if the call already ended (timed out, or its caller
// died), the request was answered before, or this actor has been killed
// while its handler runs. The result is Colony's own: gen_server:reply/2
// returns ok whatever happened to the reply, so code ported from it
// ignores the result. For a call from another node, true says only that
// the reply went to the node's connection: whether the remote caller still
// waited is known there.
func (c *Context) Reply(req Request, v any) bool {
	p := c.proc()
	if c.orphan() || req.cell == nil {
		return false
	}
	if p.ext != nil && p.ext.sysp != nil {
		p.ext.sysp.out(c, req, v) // a debug option is on (sysmsg.go)
	}
	return c.w.sys.answer(c.w, req.cell, v, nil)
}

// ReplyError answers a call with an error for the caller; it reports
// whether the reply was taken, as Reply does. A nil err is a misuse and
// panics, the call left unanswered (a success is Reply: a nil err used to
// answer the call as a success with a nil value, so that
// ReplyError(req, doWork()) told the caller (nil, nil) whenever doWork
// succeeded).
func (c *Context) ReplyError(req Request, err error) bool {
	nilReplyError(err)
	p := c.proc()
	if c.orphan() || req.cell == nil {
		return false
	}
	if p.ext != nil && p.ext.sysp != nil {
		p.ext.sysp.out(c, req, err) // a debug option is on (sysmsg.go)
	}
	return c.w.sys.answer(c.w, req.cell, nil, err)
}

// Reply answers a call from any goroutine (gen_server:reply/2). The
// call's caller must be an actor of sys or a goroutine outside: replying
// to another System's actor through sys panics. Its result is
// Context.Reply's, which gen_server:reply/2 (always ok) does not have.
func (sys *System) Reply(req Request, v any) bool {
	if req.cell == nil {
		return false
	}
	return sys.answer(nil, req.cell, v, nil)
}

// ReplyError answers a call with an error from any goroutine, as
// Context.ReplyError does inside a handler; it reports whether the reply
// was taken, as Reply does. A nil err panics, as there.
func (sys *System) ReplyError(req Request, err error) bool {
	nilReplyError(err)
	if req.cell == nil {
		return false
	}
	return sys.answer(nil, req.cell, nil, err)
}

// nilReplyError panics on ReplyError's misuse: a nil error.
func nilReplyError(err error) {
	if err == nil {
		panic("actor: ReplyError with a nil error (answer a success with Reply)")
	}
}

// answer completes cell with a reply, a value or an error alike, and counts
// a reply that lost the cell's CAS (the call had ended: it timed out, its
// callee's death failed it, or it was answered before) in
// Stats.LateReplies. Every reply path goes through here, so none can skip
// the count.
//
// A caller that has died (killed while it waited: its wait never returns)
// has ended its call as surely as a timeout has, so a reply to it is late
// too, not taken for a reader that is gone. A caller that dies just after
// the check is one that died after its reply arrived.
//
// The caller's System must be sys: another one takes the caller for dead
// and cannot wake it, so the call failed with ErrNoProc and the caller
// slept out its timeout, for ever with Infinity. It is a misuse, and
// panics before the cell is touched (TestReplyThroughAnotherSystemPanics).
func (sys *System) answer(w *worker, cell *replyCell, v any, err error) bool {
	if cell.sink {
		return sys.answerSink(cell, v, err)
	}
	if cell.done == nil && cell.caller.node != sys.node {
		panic("actor: Reply to a call through another System than the caller's")
	}
	if cell.done == nil && !sys.Alive(cell.caller) {
		cell.fail(sys, ErrNoProc) // nobody reads it: the dead caller's wait unwinds
		sys.lateReplies.Add(1)
		return false
	}
	ok := cell.complete(sys, w, v, err)
	if !ok {
		sys.lateReplies.Add(1)
	}
	return ok
}

// Call sends req to pid and waits up to timeout for the reply (gen_server's
// call). Errors: ErrTimeout; ErrNoProc if pid is dead; a *CallExitError,
// which errors.Is takes for ErrNoProc, if it dies before replying (detected
// at once through a monitor, not at the timeout); ErrCallSelf;
// ErrNegativeTimeout; ErrMailboxFull; ErrBadPid. Other actors keep running
// on this scheduler while the caller waits. Infinity waits for ever; a zero
// timeout expires at the next timer poll (tens of microseconds), so it
// gets only a reply that comes at once. From plain Go code with a
// context.Context, see System.CallContext.
func (c *Context) Call(pid Pid, req any, timeout time.Duration) (any, error) {
	p := c.proc()
	if c.orphan() {
		return nil, ErrNoProc
	}
	if timeout < 0 {
		return nil, ErrNegativeTimeout
	}
	if pid == p.pid {
		return nil, ErrCallSelf
	}
	sys := c.w.sys
	q, err := sys.lookup(pid)
	if err != nil {
		if pid.IsRemote() {
			return c.callRemote(pid, req, timeout) // remote_call.go
		}
		return nil, err
	}
	epoch := c.beginWait()
	cell := &replyCell{caller: p.pid, epoch: epoch}
	ref, err := sys.callStart(c.w, q, cell, req)
	if err != nil {
		// Retire the wait: the call's monitor may have fired before
		// callStart took it back, leaving a wake (Notified) that would
		// re-queue this actor at its next park for nothing.
		p.slot.Word.BeginWait(p.pid.gen)
		return nil, err
	}
	var tr timerRef
	if timeout != Infinity {
		tr = sys.tm.armWait(sys, p.pid, epoch, int64(timeout), nil, cell)
	}
	defer sys.callEnd(q, ref, tr)
	for cell.state.Load() != cellDone {
		c.waitPark(false)
	}
	p.slot.Word.BeginWait(p.pid.gen) // retire the wait: later wakes for it are stale
	return cell.val, sys.callErr(cell.err, pid, req, timeout)
}

// CallTimeoutError is the error of a call that ran out of time: it names
// the callee (its pid, and its registered name if it had one when the call
// timed out), the request's type and the timeout, so a log line says which
// call hung (After is the timeout, 0 for a context's deadline).
// errors.Is(err, ErrTimeout) holds, and so does
// errors.Is(err, context.DeadlineExceeded); it has Timeout() true.
type CallTimeoutError struct {
	Pid     Pid
	Name    string
	Request string        // the request's Go type, as %T prints it
	After   time.Duration // the call's timeout; 0 for a context's deadline
}

func (e *CallTimeoutError) Error() string {
	who := e.Pid.String()
	if e.Name != "" {
		who = e.Name + " " + who
	}
	if e.After > 0 {
		return fmt.Sprintf("actor: timeout: call to %s with %s unanswered after %v", who, e.Request, e.After)
	}
	return fmt.Sprintf("actor: timeout: call to %s with %s unanswered by the deadline", who, e.Request)
}

// Unwrap makes errors.Is(err, ErrTimeout) hold.
func (e *CallTimeoutError) Unwrap() error { return ErrTimeout }

// Timeout reports true, as net's timeout errors do.
func (e *CallTimeoutError) Timeout() bool { return true }

// callErr is a call's error as the caller gets it: a timeout names the
// call (CallTimeoutError); any other error is err.
func (sys *System) callErr(err error, pid Pid, req any, timeout time.Duration) error {
	if err != ErrTimeout {
		return err
	}
	name, _ := sys.nm.reg.NameOf(pid)
	if timeout == Infinity {
		timeout = 0
	}
	return &CallTimeoutError{Pid: pid, Name: name, Request: typeName(req), After: timeout}
}

// CallExitError is the error of a call whose callee died before it
// replied. Reason is the callee's exit reason, as in the exit
// {Reason, {gen_server, call, ...}} of OTP's caller: boom, normal or
// shutdown for a server that stopped, killed for one that was killed.
// errors.Is(err, ErrNoProc) holds, as for a callee already dead at the call.
type CallExitError struct{ Reason Reason }

func (e *CallExitError) Error() string {
	return fmt.Sprintf("actor: callee exited before replying: %v", e.Reason)
}

// Unwrap makes errors.Is(err, ErrNoProc) hold.
func (e *CallExitError) Unwrap() error { return ErrNoProc }

// testHookCallMonitored, if set, runs in callStart right after the callee
// is monitored (tests kill the callee there).
var testHookCallMonitored atomic.Pointer[func()]

// callStart monitors the callee on behalf of cell and sends the request.
func (sys *System) callStart(w *worker, q *proc, cell *replyCell, req any) (Ref, error) {
	if sys.cfg.det != nil {
		sys.detFlushTo(q.pid) // messages in flight to q first (det.go)
	}
	ref := sys.newRef()
	if !q.coldNode().node.AddMonitor(uint64(ref), peer{call: cell}) {
		return 0, ErrNoProc
	}
	if h := testHookCallMonitored.Load(); h != nil {
		(*h)()
	}
	from := cell.caller
	if err := q.mbox.Send(Request{Msg: req, from: from, cell: cell}, wcache(w)); err != nil {
		q.coldNode().node.RemoveMonitor(uint64(ref))
		if err == mailbox.ErrClosed {
			return 0, ErrNoProc
		}
		return 0, ErrMailboxFull
	}
	if q.slot.Word.WakeMsg(q.pid.gen) == slot.Enqueue {
		sys.ready(w, q.pid, true)
	}
	return ref, nil
}

func (sys *System) callEnd(q *proc, ref Ref, tr timerRef) {
	sys.cancelTimer(tr)
	if cs := q.cold.Load(); cs != nil {
		cs.node.RemoveMonitor(uint64(ref))
	}
}

// Call sends req to pid from outside the system (a plain goroutine) and
// waits up to timeout for the reply; see Context.Call.
func (sys *System) Call(pid Pid, req any, timeout time.Duration) (any, error) {
	if timeout < 0 {
		return nil, ErrNegativeTimeout
	}
	oc, err := sys.beginOutsideCall(pid, req)
	if err != nil {
		if pid.IsRemote() {
			return sys.callRemote(context.Background(), pid, req, timeout) // remote_call.go
		}
		return nil, err
	}
	// The timeout is a wheel timer that fails the cell, as for a call from
	// an actor (a Go timer per call cost more than the rest of the call).
	// Nothing is left waiting at Shutdown: the callee's death fails the
	// cell through the call's monitor.
	var tr timerRef
	if timeout != Infinity {
		tr = sys.tm.armWait(sys, Pid{}, 0, int64(timeout), nil, oc.cell)
	}
	<-oc.cell.done
	v, err := sys.endOutsideCall(oc, tr)
	return v, sys.callErr(err, pid, req, timeout)
}

// outsideCall is a call from a goroutine outside the System, between
// beginOutsideCall and endOutsideCall.
type outsideCall struct {
	q    *proc
	cell *replyCell
	ref  Ref
}

// beginOutsideCall sends req to pid for a caller outside the System. The
// caller receives once from oc.cell.done (whoever completes the cell sends
// on it exactly once) and then calls endOutsideCall.
func (sys *System) beginOutsideCall(pid Pid, req any) (outsideCall, error) {
	q, err := sys.lookup(pid)
	if err != nil {
		if err == ErrNoProc && sys.halt.Load() {
			return outsideCall{}, ErrStopped // as Send: after Shutdown every pid is dead
		}
		return outsideCall{}, err
	}
	// done is a cap-1 channel from a pool: the cell's CAS winner sends on
	// it exactly once and the caller receives that once, so after the
	// receive nobody will touch it again (a late reply loses the CAS) and it
	// can be reused.
	done, _ := donePool.Get().(chan struct{})
	if done == nil || sys.cfg.det != nil { // det.go: a pooled channel may be another test's
		done = make(chan struct{}, 1)
	}
	cell := &replyCell{done: done}
	ref, err := sys.callStart(nil, q, cell, req)
	if err != nil {
		// The callee's finaliser may have failed the cell (and sent on done)
		// between the monitor and its removal: recycle done only if nobody
		// can send on it any more.
		if cell.state.CompareAndSwap(cellPending, cellDone) && sys.cfg.det == nil {
			donePool.Put(done)
		}
		return outsideCall{}, err
	}
	return outsideCall{q, cell, ref}, nil
}

// endOutsideCall recycles the call's channel (received from already),
// removes its monitor and timer, and returns its result.
func (sys *System) endOutsideCall(oc outsideCall, tr timerRef) (any, error) {
	if sys.cfg.det == nil { // det.go: a test's channel is not for others
		donePool.Put(oc.cell.done)
	}
	sys.callEnd(oc.q, oc.ref, tr)
	return oc.cell.val, oc.cell.err
}

// donePool recycles the wake-up channels of calls from outside the system.
var donePool sync.Pool

// Caller is implemented by *System (calls from outside) and *Context (calls
// from inside a handler), for the typed Call and CallName helpers.
type Caller interface {
	Call(pid Pid, req any, timeout time.Duration) (any, error)
	CallName(name string, req any, timeout time.Duration) (any, error)
}

// Call is the typed form of Caller.Call: the reply is asserted to T. A reply
// of another type is an error, not a panic.
func Call[T any](c Caller, pid Pid, req any, timeout time.Duration) (T, error) {
	v, err := c.Call(pid, req, timeout)
	return typedReply[T](v, err)
}

// typedReply asserts a call's reply to T (a nil reply is T's zero value).
func typedReply[T any](v any, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	if v == nil {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, &ReplyTypeError{Got: v, Want: zero}
	}
	return t, nil
}

// ReplyTypeError is returned by Call[T] when the reply is not a T.
type ReplyTypeError struct{ Got, Want any }

func (e *ReplyTypeError) Error() string {
	return "actor: reply of type " + typeName(e.Got) + ", want " + typeName(e.Want)
}

package actor

import (
	"errors"
	"time"
)

// Blocking work in a handler.
//
// A handler that blocks outside the runtime (a file read, a cgo call, a
// client library's blocking call) keeps its scheduler role until it
// returns; after WatchdogThreshold the watchdog hands the role on and
// reports the handler. Context.Blocking is the supported way: f runs on a
// goroutine of its own while the handler waits inside the runtime, as a
// Call does, so the role is handed on at once and nothing is reported.
//
// It is a Call whose callee is that goroutine: the result is written into
// a reply cell (call.go), which the handler's wait watches, and the
// timeout is a wheel timer that fails the cell. Whoever completes the cell
// first wins its CAS; a result that comes after a timeout or a kill loses
// it and is dropped, so nothing is ever left in the actor's mailbox and no
// stale wake ends a later wait (the wake carries the wait's epoch).

// ErrNilFunc: Context.Blocking was given a nil func.
var ErrNilFunc = errors.New("actor: nil func")

// blockingPanic carries a panic of Blocking's f to the waiting handler.
type blockingPanic struct{ v any }

// Blocking runs f on a goroutine of its own and waits, inside the runtime,
// up to timeout for it to return, and returns what f returned: blocking
// work (a file read, a DNS lookup, a cgo call, a blocking client library)
// without holding a scheduler role or tripping the watchdog (Config's
// WatchdogThreshold). Other actors run meanwhile; messages to the actor
// wait in its mailbox. A panic in f is raised again in the handler, with
// the same value, as if f had run there (the crash report's stack is the
// handler's); an f that calls runtime.Goexit is raised as a panic too.
//
// f cannot be interrupted: on ErrTimeout, or a kill of the actor (which
// ends the wait at once, as for any wait), f runs on to its end on its
// goroutine and its result is dropped; Shutdown does not wait for it
// either (it stops the actor, and returns with f still running). So f
// should bound itself (a context with a deadline for the library it
// calls, a read deadline); it must not use c, which belongs to the
// handler. timeout 0 is ErrTimeout
// unless f has already returned (it never has, in practice); Infinity
// waits as long as f runs; negative is ErrNegativeTimeout, and a nil f is
// ErrNilFunc; in both cases f is not run.
func (c *Context) Blocking(f func() (any, error), timeout time.Duration) (any, error) {
	p := c.proc()
	if c.orphan() {
		return nil, ErrNoProc
	}
	if timeout < 0 {
		return nil, ErrNegativeTimeout
	}
	if f == nil {
		return nil, ErrNilFunc
	}
	sys := c.w.sys
	if err := sys.detRefuse("Context.Blocking"); err != nil {
		return nil, err // det.go
	}
	epoch := c.beginWait()
	cell := &replyCell{caller: p.pid, epoch: epoch}
	var tr timerRef
	if timeout != Infinity {
		tr = sys.tm.armWait(sys, p.pid, epoch, int64(timeout), nil, cell)
	}
	go runBlocking(sys, cell, f)
	defer sys.cancelTimer(tr)
	for cell.state.Load() != cellDone {
		c.waitPark(false)
	}
	p.slot.Word.BeginWait(p.pid.gen) // retire the wait: later wakes for it are stale
	if bp, ok := cell.val.(blockingPanic); ok {
		panic(bp.v)
	}
	return cell.val, cell.err
}

// errGoexit is the panic raised in the handler when Blocking's f ended by
// runtime.Goexit instead of returning.
const errGoexit = "actor: Blocking's f called runtime.Goexit instead of returning"

// runBlocking runs f and completes cell with its result, or with its panic
// for the handler to raise again (a panic on this goroutine would end the
// process). An f that neither returned nor panicked called runtime.Goexit
// (a t.Fatal in it): that is raised as a panic too, not taken for a
// return of (nil, nil) (TestBlockingGoexitInF).
func runBlocking(sys *System, cell *replyCell, f func() (any, error)) {
	var v any
	var err error
	returned := false
	defer func() {
		if r := recover(); r != nil {
			v, err = blockingPanic{r}, nil
		} else if !returned {
			v, err = blockingPanic{errGoexit}, nil
		}
		cell.complete(sys, nil, v, err)
	}()
	v, err = f()
	returned = true
}

package actor

import (
	"context"
	"errors"
)

// CallContext calls pid from outside the System (an HTTP handler, a plain
// goroutine) and waits for the reply until ctx is done: the call ends with
// ctx's error when ctx is cancelled, and with an error that is both
// ErrTimeout and context.DeadlineExceeded when its deadline passes. A reply
// that comes later is dropped and counted in Stats.LateReplies, as after a
// Call's timeout. A ctx already done fails at once and sends nothing.
// Otherwise as System.Call.
func (sys *System) CallContext(ctx context.Context, pid Pid, req any) (any, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	oc, err := sys.beginOutsideCall(pid, req)
	if err != nil {
		if pid.IsRemote() {
			return sys.callRemote(ctx, pid, req, Infinity) // remote_call.go
		}
		return nil, err
	}
	select {
	case <-oc.cell.done:
	case <-ctx.Done():
		// Fail the call unless the reply (or the callee's death) won; the
		// winner sends on done either way, once.
		oc.cell.complete(sys, nil, nil, ctxErr(ctx))
		<-oc.cell.done
	}
	v, err := sys.endOutsideCall(oc, timerRef{})
	return v, sys.callErr(err, pid, req, 0)
}

// CallNameContext is CallContext to the actor registered under name; a
// name nobody holds fails as CallName's does.
func (sys *System) CallNameContext(ctx context.Context, name string, req any) (any, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	pid, err := sys.callee(name)
	if err != nil {
		return nil, err
	}
	return sys.CallContext(ctx, pid, req)
}

// CallContext is the typed form of System.CallContext: the reply is
// asserted to T, as Call's.
func CallContext[T any](ctx context.Context, sys *System, pid Pid, req any) (T, error) {
	v, err := sys.CallContext(ctx, pid, req)
	return typedReply[T](v, err)
}

// CallNameContext is the typed form of System.CallNameContext.
func CallNameContext[T any](ctx context.Context, sys *System, name string, req any) (T, error) {
	v, err := sys.CallNameContext(ctx, name, req)
	return typedReply[T](v, err)
}

// ctxErr is ctx's error, a passed deadline as ErrTimeout (which is also
// context.DeadlineExceeded to errors.Is), so that code handling a Call's
// timeout handles a CallContext's deadline too.
func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

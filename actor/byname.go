package actor

import (
	"fmt"
	"time"
)

// Calls and sends by registered name (gen_server:call(Name, Req),
// gen_server:cast(Name, Msg), Name ! Msg). The name is resolved once, at the
// call, as OTP's gen does for a local name (whereis, then a call to that
// pid): a holder that dies after the lookup fails the call as any callee's
// death does (*CallExitError), and a name re-registered meanwhile is not
// followed.

// callee resolves name for a call: a name nobody holds is an error that is
// both ErrNoProc (OTP exits the caller with noproc) and ErrNotRegistered,
// as for SendName; ErrStopped once the System has halted.
func (sys *System) callee(name string) (Pid, error) {
	pid, ok := sys.nm.reg.Whereis(name)
	if !ok {
		if sys.halt.Load() {
			return Pid{}, ErrStopped
		}
		return Pid{}, fmt.Errorf("%w (%w): %q", ErrNoProc, ErrNotRegistered, name)
	}
	return pid, nil
}

// sendee resolves name for a send: a name nobody holds is ErrNotRegistered
// (Erlang raises badarg); ErrStopped once the System has halted, as Send's.
func (sys *System) sendee(name string) (Pid, error) {
	pid, ok := sys.nm.reg.Whereis(name)
	if !ok {
		if sys.halt.Load() {
			return Pid{}, ErrStopped
		}
		return Pid{}, fmt.Errorf("%w: %q", ErrNotRegistered, name)
	}
	return pid, nil
}

// CallName calls the actor registered under name (gen_server:call(Name,
// Req)) from outside the system; see System.Call. A name nobody holds
// fails at once with an error that is both ErrNoProc and ErrNotRegistered
// to errors.Is.
func (sys *System) CallName(name string, req any, timeout time.Duration) (any, error) {
	pid, err := sys.callee(name)
	if err != nil {
		return nil, err
	}
	return sys.Call(pid, req, timeout)
}

// CallName calls the actor registered under name from a handler; see
// Context.Call and System.CallName. A name the caller itself holds is
// ErrCallSelf.
func (c *Context) CallName(name string, req any, timeout time.Duration) (any, error) {
	c.proc()
	if c.orphan() {
		return nil, ErrNoProc
	}
	pid, err := c.w.sys.callee(name)
	if err != nil {
		return nil, err
	}
	return c.Call(pid, req, timeout)
}

// SendName sends msg to the actor registered under name from a handler;
// see System.SendName (a name nobody holds is ErrNotRegistered).
func (c *Context) SendName(name string, msg any) error {
	c.proc()
	if c.orphan() {
		return nil // as Send: what a killed actor's handler does is dropped
	}
	pid, err := c.w.sys.sendee(name)
	if err != nil {
		return err
	}
	return c.w.sys.send(c.w, pid, msg)
}

// CallName is the typed form of Caller.CallName: the reply is asserted to
// T, as Call's.
func CallName[T any](c Caller, name string, req any, timeout time.Duration) (T, error) {
	v, err := c.CallName(name, req, timeout)
	return typedReply[T](v, err)
}

// CastName casts msg to the Server registered under name
// (gen_server:cast(Name, Msg)). Unlike OTP's cast, which ignores a name
// nobody holds, it returns ErrNotRegistered then (ErrStopped after
// Shutdown); the cast itself is a Send and never fails once the name
// resolves.
func CastName(s Sender, name string, msg any) error { return s.SendName(name, castMsg{msg}) }

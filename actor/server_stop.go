package actor

import (
	"errors"
	"time"
)

// Stopping a server: from outside (gen_server:stop/3) and from its own
// HandleCall with a reply (gen_server's {stop, Reason, Reply, State}).
//
// StopServer sends the server a stop request, which it takes in mailbox
// order like any message (OTP's system message: a server busy in a
// callback, or in a selective Receive inside one, takes it when it returns
// to its loop), and waits for the server's exit on a monitor. The request
// runs the same path as a Stop in a callback, so Terminate runs with the
// reason whether or not the server traps exits. A stop that times out
// leaves the request queued, as OTP's sys:terminate does: the server still
// stops when it gets to it.

// ErrNotServer: StopServer was given a pid whose actor is not a Server (a
// plain actor has no Terminate to run).
var ErrNotServer = errors.New("actor: not a server")

// stopRequest is StopServer's request, taken by serverActor.dispatch.
type stopRequest struct{ reason Reason }

// pendingReply is StopReply's reply, sent once Terminate has run.
type pendingReply struct {
	req Request
	v   any
}

// StopReply is gen_server's {stop, Reason, Reply, State}: the server stops
// with reason, its Terminate runs, and only then does req's caller get v,
// before the server's exit is signalled. (Reply then Stop gives the other
// order: the caller can run before Terminate has.) A panic later in the
// same callback drops the reply, as a crash would in OTP, and a kill drops
// it with the server. Outside a Server (a plain actor has no Terminate) it
// replies and stops.
func StopReply(c *Context, reason Reason, req Request, v any) {
	a, ok := c.proc().beh.(*serverActor)
	if !ok {
		c.Reply(req, v)
		c.Stop(reason)
		return
	}
	a.stopReply = &pendingReply{req, v}
	c.Stop(reason)
}

// sendStopReply sends StopReply's reply, if one is pending.
func (a *serverActor) sendStopReply(c *Context) {
	if r := a.stopReply; r != nil {
		a.stopReply = nil
		c.Reply(r.req, r.v)
	}
}

// StopServer stops the server pid as gen_server:stop(Pid, Reason, Timeout)
// does and waits for it to exit: the server runs Terminate(reason), trapping
// exits or not, and exits with reason. A nil reason is Normal. Errors:
// ErrNoProc if pid is not alive; ErrTimeout if it has not exited within
// timeout (it keeps running, and stops when it takes the request); a
// *CallExitError with the reason it exited with if that was another (a kill
// meanwhile, a Terminate that stopped with another reason or panicked);
// ErrNotServer for a plain actor; ErrNegativeTimeout, ErrBadPid,
// ErrStopped. Its wait is a plain Go wait: from a handler use
// Context.StopServer.
func StopServer(sys *System, pid Pid, reason Reason, timeout time.Duration) error {
	if sys == nil {
		return ErrNilSystem
	}
	if timeout < 0 {
		return ErrNegativeTimeout
	}
	if reason == nil {
		reason = Normal
	}
	w, err := sys.Monitor(pid)
	if err != nil {
		return err
	}
	defer w.Stop()
	if err := sys.requestStop(pid, reason); err != nil {
		return err
	}
	var deadline <-chan time.Time
	if timeout != Infinity {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-w.Done():
		return stopResult(w.Reason(), reason)
	case <-deadline:
		return ErrTimeout
	}
}

// StopServer is StopServer from a handler: it waits in the runtime, so the
// scheduler role is handed on. Stopping the caller itself is ErrCallSelf,
// as gen_server:stop(self()) is calling_self.
func (c *Context) StopServer(pid Pid, reason Reason, timeout time.Duration) error {
	p := c.proc()
	if timeout < 0 {
		return ErrNegativeTimeout
	}
	if pid == p.pid {
		return ErrCallSelf
	}
	if reason == nil {
		reason = Normal
	}
	sys := c.w.sys
	if _, err := sys.lookup(pid); err == ErrBadPid {
		return err
	}
	ref, err := c.Monitor(pid)
	if err != nil {
		return err
	}
	if err := sys.requestStop(pid, reason); err != nil {
		c.Demonitor(ref, true)
		return err
	}
	m, err := c.Receive(func(m any) bool { d, ok := m.(Down); return ok && d.Ref == ref }, timeout)
	if err != nil {
		c.Demonitor(ref, true)
		return err
	}
	return stopResult(m.(Down).Reason, reason)
}

// requestStop queues the stop request for pid, a live Server: ErrNoProc if
// it is dead, ErrNotServer if it is not a Server.
func (sys *System) requestStop(pid Pid, reason Reason) error {
	p, err := sys.lookup(pid)
	if err != nil {
		return err
	}
	if _, ok := p.beh.(*serverActor); !ok {
		return ErrNotServer
	}
	sys.deliver(nil, p, stopRequest{reason})
	return nil
}

// stopResult is StopServer's answer once the server has exited with got.
func stopResult(got, want Reason) error {
	switch {
	case reasonsEqual(got, want):
		return nil
	case got == NoProc:
		return ErrNoProc
	}
	return &CallExitError{Reason: got}
}

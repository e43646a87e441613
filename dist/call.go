package dist

// gen_server calls and casts across nodes.
//
// Design note.
//
// Problem. OTP's call (gen:do_call, OTP 24 and later) is: monitor the
// callee with {alias, demonitor}, so that the monitor's reference is also
// an alias; send {'$gen_call', {Self, [alias | Mref]}, Request}; wait for
// {[alias | Mref], Reply} (which gen:reply/2 sends to the alias) or the
// monitor's DOWN (noconnection: exit {nodedown, Node}; any other reason:
// exit Reason); on a timeout, demonitor, which deactivates the alias, so
// that a late reply is dropped by the runtime and never reaches the
// mailbox. Both directions must speak exactly that, since the peer may be
// an Erlang node.
//
// Incoming. A SEND or REG_SEND whose message is {'$gen_call', {From, Tag},
// Req} becomes an actor.Request for the local actor (System.SendRequest):
// a Server's HandleCall answers it as a local call, now or later, with
// Reply or ReplyError, and the answer runs genReply on the answering
// goroutine: {Tag, Reply} goes to the alias in a tag [alias | Alias]
// (ALIAS_SEND), else to From, as gen:reply/2 does. ReplyError(err) answers
// {error, Reason} (Reason: err's text, a binary). A reply with no term form
// is answered {error, Reason} too, and logged: the caller gets an answer,
// not a timeout. {'$gen_cast', Msg} becomes actor.Cast (HandleCast). The
// caller's MONITOR_P on the callee is the monitors' business (control.go).
//
// Outgoing. A call (actor.Context.Call or System.Call of a remote pid,
// through actor.RemoteCaller; Node.CallName for {Name, Node}) makes a
// reference Mref, records the call under it (calls: the node's table,
// which ALIAS_SEND and MONITOR_P_EXIT consult; and the peer's, which the
// peer's end fails with noconnection), then queues MONITOR_P of the
// callee under Mref and the '$gen_call' with the tag [alias | Mref], in
// that order on one connection. The call ends with the first of:
//
//   - the reply {[alias | Mref], Reply}, by ALIAS_SEND to Mref (or by a SEND
//     to the caller's pid: a server that answers From ! {Tag, Reply} by
//     hand); Reply is the caller's value, whatever it is;
//   - MONITOR_P_EXIT for Mref: noproc is actor.ErrNoProc (the callee, or
//     the name, was not there), any other reason an *actor.CallExitError;
//   - the peer's end (a lost connection, or a node that could not be
//     reached): a *NodeDownError (OTP's {nodedown, Node});
//   - the caller's timeout, kept by actor (the wheel timer of its wait).
//
// When the caller's wait ends, however it ended, cancel takes the call out
// of both tables and, unless the monitor has fired, queues DEMONITOR_P. A
// reply that comes after that finds no call and is dropped (counted in
// Stats.Dropped), and so is a reply sent to the caller's pid with one of
// this node's [alias | Ref] tags: no stray reply reaches a mailbox.
//
// Locks: calls.mu and a peer's qmu are never held together.

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

var (
	atomGenCast = actor.Atom("$gen_cast")
	atomError   = actor.Atom("error")
)

// ErrNoConnection: a call's node went down before the reply, or could not
// be reached (OTP's caller exits {nodedown, Node}). A *NodeDownError
// wraps it.
var ErrNoConnection = errors.New("dist: noconnection")

// NodeDownError is the error of a call whose callee's node went down, or
// could not be reached, before it replied: errors.Is(err,
// ErrNoConnection) holds. Err is the connection's end (ErrTickTimeout,
// ErrConnectionClosed, a failed dial, ...).
type NodeDownError struct {
	Node actor.Atom
	Err  error
}

func (e *NodeDownError) Error() string {
	return fmt.Sprintf("dist: nodedown: %s (%v)", e.Node, e.Err)
}

// Unwrap makes errors.Is(err, ErrNoConnection) hold, and reaches Err.
func (e *NodeDownError) Unwrap() []error { return []error{ErrNoConnection, e.Err} }

// Caller is what Node.CallName calls from: an *actor.Context (the
// caller's wait hands its scheduler role on, as a local Call's does) or an
// *actor.System (a plain goroutine).
type Caller interface {
	actor.Caller
	actor.Awaiter
}

// remoteCall is one outgoing call, from its start to its cancel.
type remoteCall struct {
	n    *Node
	node actor.Atom
	done actor.AwaitDone
	// Written by startCall after its watch returned, read by cancel
	// (which runs after the caller's wait, itself after startCall).
	ref       etf.Ref
	demonitor func() bool
	downed    atomic.Bool // the monitor fired before the request went out
}

// StartCall is the route for calls to remote pids (actor.RemoteCaller):
// Context.Call and System.Call of a remote pid come here.
func (n *Node) StartCall(from, to actor.Pid, req any, done actor.AwaitDone) (func(), error) {
	id, ok := to.Remote()
	if !ok {
		return nil, fmt.Errorf("%w: not a remote pid", actor.ErrBadPid)
	}
	if id.Node == n.name {
		return nil, actor.ErrNoProc // a pid of an earlier incarnation of this node
	}
	return n.startCall(from, to, id.Node, req, done)
}

// CallName calls the process registered as name on node
// (gen_server:call({Name, Node}, Req, Timeout)) and waits up to timeout for
// its reply, connecting first if need be. from is the caller: a handler's
// *actor.Context, whose wait hands the scheduler role on, or the
// *actor.System from a plain goroutine. Errors: actor.ErrTimeout (a
// *actor.CallTimeoutError), actor.ErrNoProc if nobody holds the name, an
// *actor.CallExitError if the callee dies first, a *NodeDownError
// (ErrNoConnection) if node goes down or cannot be reached; a node name
// that is this node's calls locally (System.CallName's errors).
func (n *Node) CallName(from Caller, name string, node actor.Atom, req any, timeout time.Duration) (any, error) {
	if node == n.name {
		return from.CallName(name, req, timeout)
	}
	v, err := from.Await(timeout, func(self actor.Pid, done actor.AwaitDone) (func(), error) {
		return n.startCall(self, actor.Atom(name), node, req, done)
	})
	if errors.Is(err, actor.ErrTimeout) {
		if timeout == actor.Infinity {
			timeout = 0
		}
		err = &actor.CallTimeoutError{Name: name + "@" + string(node), Request: fmt.Sprintf("%T", req), After: timeout}
	}
	return v, err
}

// CastName casts msg to the Server registered as name on node
// (gen_server:cast({Name, Node}, Msg)): {'$gen_cast', Msg} as REG_SEND.
// Like a cast, it does not fail for a name nobody holds. from as SendName.
func (n *Node) CastName(from actor.Pid, name string, node actor.Atom, msg any) error {
	if node == n.name {
		return actor.CastName(n.sys, name, msg)
	}
	return n.SendName(from, name, node, etf.Tuple{atomGenCast, msg})
}

// requestPeer is peerFor for an outgoing call or spawn request: a node
// that cannot be reached is a *NodeDownError; this node stopped,
// ErrStopped.
func (n *Node) requestPeer(node actor.Atom) (*peer, error) {
	p, err := n.peerFor(node)
	if err != nil && !errors.Is(err, ErrStopped) {
		return nil, &NodeDownError{Node: node, Err: err}
	}
	return p, err
}

// startCall monitors target (a pid, or a name on node), records the call
// under the monitor's reference and sends the request; see the design
// note.
func (n *Node) startCall(from actor.Pid, target any, node actor.Atom, req any, done actor.AwaitDone) (func(), error) {
	label := atomGenCall
	if sr, ok := req.(actor.SysRequest); ok {
		// A system message (sysmsg.go): sys's {system, From, Req}.
		t, err := n.sysRequestTerm(sr)
		if err != nil {
			return nil, err
		}
		label, req = sysAtomSystem, t
	}
	p, err := n.requestPeer(node)
	if err != nil {
		return nil, err
	}
	if from.IsZero() {
		from = n.kernel
	}
	rc := &remoteCall{n: n, node: node, done: done}
	down := func(r actor.Reason) {
		rc.downed.Store(true)
		rc.done(nil, callDownErr(node, r))
	}
	var ctl control
	if pid, ok := target.(actor.Pid); ok {
		rc.ref, rc.demonitor = n.watchPid(pid, down)
		ctl = control{op: opSendSender, from: from, to: pid}
	} else {
		rc.ref, rc.demonitor = n.watchName(target.(actor.Atom), node, down)
		ctl = control{op: opRegSend, from: from, name: string(target.(actor.Atom))}
	}
	n.calls.add(rc.ref, rc)
	if rc.downed.Load() {
		return rc.cancel, nil // noproc or noconnection at once: nothing to send
	}
	msg := etf.Tuple{label, etf.Tuple{from, aliasTag(rc.ref)}, req}
	if err := p.send(n.enc, ctl, msg, true); err != nil {
		rc.cancel() // an unencodable request, or a full queue
		return nil, err
	}
	n.stats.sent.Add(1)
	return rc.cancel, nil
}

// callDownErr is the error of a call whose monitor fired with reason r.
func callDownErr(node actor.Atom, r actor.Reason) error {
	switch r {
	case actor.NoProc:
		return actor.ErrNoProc
	case actor.NoConnection:
		return &NodeDownError{Node: node, Err: ErrNoConnection}
	}
	return &actor.CallExitError{Reason: r}
}

// cancel ends the call's life here: out of the table (a reply from now on
// is late), and its monitor taken back unless it fired.
func (rc *remoteCall) cancel() {
	rc.n.calls.takeIf(rc.ref, rc)
	rc.demonitor()
}

// aliasTag is the tag of a call's From: [alias | Mref].
func aliasTag(ref etf.Ref) etf.ImproperList {
	return etf.ImproperList{Elems: []any{atomAlias}, Tail: ref}
}

// callReply takes msg, sent to alias (ALIAS_SEND) or to a local pid
// (SEND), as a call's reply if it is one: {[alias | Ref], Reply} with Ref
// this node's. It reports whether msg was taken or is a late reply (both
// consumed: nothing for a mailbox).
func (n *Node) callReply(msg any) bool {
	t, ok := msg.(etf.Tuple)
	if !ok || len(t) != 2 {
		return false
	}
	l, ok := t[0].(etf.ImproperList)
	if !ok || len(l.Elems) != 1 || l.Elems[0] != atomAlias {
		return false
	}
	ref, ok := l.Tail.(etf.Ref)
	if !ok || ref.Node != n.name || ref.Creation != n.etfNode.Creation {
		return false
	}
	rc := n.calls.take(ref)
	if rc == nil || !rc.done(t[1], nil) {
		n.stats.dropped.Add(1) // late: the call timed out or ended
		return true
	}
	n.stats.received.Add(1)
	return true
}

// aliasReply takes a message sent to alias if alias is a call's: the
// message is the reply, or if it is not of the reply's shape, dropped.
func (n *Node) aliasReply(alias etf.Ref, msg any) bool {
	if !n.calls.has(alias) {
		return false
	}
	if !n.callReply(msg) {
		n.stats.dropped.Add(1)
	}
	return true
}

// genMsg takes an incoming '$gen_call' or '$gen_cast' for the local actor
// to (resolved: a pid of this node) and delivers it as a Request or a
// Cast, or a system message for an actor that answers them (sysmsg.go).
// It reports whether msg was one.
func (n *Node) genMsg(to actor.Pid, msg any) bool {
	t, ok := msg.(etf.Tuple)
	if !ok {
		return false
	}
	switch {
	case len(t) == 3 && t[0] == sysAtomSystem:
		return n.sysMsg(to, t) // sysmsg.go
	case len(t) == 3 && t[0] == atomGenCall:
		from, ok := t[1].(etf.Tuple)
		if !ok || len(from) != 2 {
			return false
		}
		caller, ok := from[0].(actor.Pid)
		if !ok {
			return false
		}
		tag := from[1]
		err := n.sys.SendRequest(to, caller, t[2], func(v any, err error) {
			n.genReply(to, caller, tag, v, err)
		})
		if err != nil {
			n.stats.dropped.Add(1) // dead: the caller's monitor says noproc
		} else {
			n.stats.received.Add(1)
		}
		return true
	case len(t) == 2 && t[0] == atomGenCast:
		if err := actor.Cast(n.sys, to, t[1]); err != nil {
			n.stats.dropped.Add(1)
		} else {
			n.stats.received.Add(1)
		}
		return true
	}
	return false
}

// genMsgName is genMsg for a message sent to a registered name: a name
// nobody holds drops it (the caller's monitor of the name says noproc).
func (n *Node) genMsgName(name actor.Atom, msg any) bool {
	t, ok := msg.(etf.Tuple)
	if !ok || len(t) < 2 || (t[0] != atomGenCall && t[0] != atomGenCast && t[0] != sysAtomSystem) {
		return false
	}
	pid, ok := n.sys.Whereis(string(name))
	if !ok {
		n.stats.dropped.Add(1)
		return true
	}
	return n.genMsg(pid, msg)
}

// genReply answers an incoming call as gen:reply/2 does: {Tag, Reply} to
// the alias of a tag [alias | Alias], else to the caller's pid. An error
// answer (ReplyError) is {error, Reason}, Reason the error's text.
func (n *Node) genReply(callee, caller actor.Pid, tag, v any, err error) {
	if err != nil {
		v = errorTerm(err)
	}
	send := func(v any) error {
		msg := etf.Tuple{tag, v}
		if l, ok := tag.(etf.ImproperList); ok && len(l.Elems) == 1 && l.Elems[0] == atomAlias {
			if alias, ok := l.Tail.(etf.Ref); ok {
				return n.SendAlias(callee, alias, msg)
			}
		}
		if !caller.IsRemote() {
			return n.sys.Send(caller, msg)
		}
		return n.SendRemote(callee, caller, msg)
	}
	if err := send(v); err != nil {
		n.logf(levelWarn, "dist: reply of %v to %v: %v", callee, caller, err)
		if errors.Is(err, etf.ErrUnsupported) || errors.Is(err, etf.ErrTooDeep) || errors.Is(err, etf.ErrTooLarge) {
			send(errorTerm(fmt.Errorf("dist: reply not sent: %w", err)))
		}
	}
}

// errorTerm is the term of an error answer: {error, Text}.
func errorTerm(err error) etf.Tuple { return etf.Tuple{atomError, err.Error()} }

// castOut turns an actor.Cast to a remote pid into its term,
// {'$gen_cast', Msg}; any other message is itself.
func castOut(msg any) any {
	if m, ok := actor.CastMsg(msg); ok {
		return etf.Tuple{atomGenCast, m}
	}
	return msg
}

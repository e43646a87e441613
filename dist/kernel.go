package dist

// The node's net_kernel: an actor registered as "net_kernel" that holds
// the node (its death closes it: System.Hold) and answers what peers ask
// net_kernel for.
//
// net_adm:ping(Node) is gen:call({net_kernel, Node}, '$gen_call',
// {is_auth, node()}): a message {'$gen_call', {From, Tag}, {is_auth, N}}
// answered by {Tag, yes} sent to From. OTP 24 and later make Tag
// [alias | Mref], where Mref is an alias of the caller (monitor with
// {alias, demonitor}): the answer then goes to the alias (ALIAS_SEND), as
// gen:reply/2 sends it. Before the call the caller monitors {net_kernel,
// Node} (MONITOR_P by name): net_kernel exists, so no noproc comes back.
//
// A '$gen_call' from a peer reaches this actor as an actor.Request
// (call.go), answered with Reply like any Server's; a '$gen_call' tuple
// from a local actor is answered here by hand.
//
// Ping from Colony is the same call the other way: the reply {Tag, yes}
// comes back to this actor as an ordinary message, and is handed to the
// waiting Ping by its Tag.

import (
	"context"
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

var (
	atomGenCall = actor.Atom("$gen_call")
	atomIsAuth  = actor.Atom("is_auth")
	atomYes     = actor.Atom("yes")
	atomAlias   = actor.Atom("alias")
)

type kernel struct{ n *Node }

func (k *kernel) Receive(c *actor.Context, msg any) {
	if req, ok := msg.(actor.Request); ok {
		// A '$gen_call' from a peer arrives as a Request (call.go).
		if t, ok := req.Msg.(etf.Tuple); ok && len(t) == 2 && t[0] == atomIsAuth {
			c.Reply(req, atomYes)
		}
		// Other calls (net_kernel's API for its own node) are not answered.
		return
	}
	t, ok := msg.(etf.Tuple)
	if !ok {
		return
	}
	switch {
	case len(t) == 3 && t[0] == atomGenCall:
		from, ok := t[1].(etf.Tuple)
		if !ok || len(from) != 2 {
			return
		}
		pid, ok := from[0].(actor.Pid)
		if !ok {
			return
		}
		if req, ok := t[2].(etf.Tuple); ok && len(req) == 2 && req[0] == atomIsAuth {
			k.n.reply(c, pid, from[1], atomYes)
		}
		// Other calls (net_kernel's API for its own node) are not answered.
	case len(t) == 2:
		if ref, ok := t[0].(etf.Ref); ok {
			k.n.pingReply(ref, t[1])
		}
	}
}

// reply answers a '$gen_call' as gen:reply/2 does: to the alias in a tag
// [alias | Alias], or else to the caller's pid.
func (n *Node) reply(c *actor.Context, to actor.Pid, tag any, v any) {
	msg := etf.Tuple{tag, v}
	if l, ok := tag.(etf.ImproperList); ok && len(l.Elems) == 1 && l.Elems[0] == atomAlias {
		if alias, ok := l.Tail.(etf.Ref); ok && to.IsRemote() {
			if err := n.SendAlias(c.Self(), alias, msg); err != nil {
				n.logf(levelWarn, "dist: reply to %v: %v", to, err)
			}
			return
		}
	}
	if err := c.Send(to, msg); err != nil {
		n.logf(levelWarn, "dist: reply to %v: %v", to, err)
	}
}

func (n *Node) pingReply(ref etf.Ref, v any) {
	n.pingMu.Lock()
	ch := n.pings[ref]
	delete(n.pings, ref)
	n.pingMu.Unlock()
	if ch != nil {
		ch <- v // cap 1, one reply per ref
	}
}

// Ping is net_adm:ping(node): it connects to node if need be and asks its
// net_kernel whether it is there (the is_auth call). nil is pong; any
// other answer, a connection that cannot be made (an unknown node, a
// refused handshake: a different cookie) or ctx ending first is an error
// wrapping ErrPang. It blocks: inside a handler, call it in
// Context.Blocking.
func (n *Node) Ping(ctx context.Context, node actor.Atom) error {
	if node == n.name {
		return nil
	}
	p, err := n.peerFor(node)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPang, err)
	}
	ref := n.MakeRef()
	ch := make(chan any, 1)
	n.pingMu.Lock()
	n.pings[ref] = ch
	n.pingMu.Unlock()
	defer func() {
		n.pingMu.Lock()
		delete(n.pings, ref)
		n.pingMu.Unlock()
	}()
	call := etf.Tuple{atomGenCall, etf.Tuple{n.kernel, ref}, etf.Tuple{atomIsAuth, n.name}}
	if err := p.send(n.enc, control{op: opRegSend, from: n.kernel, name: "net_kernel"}, call, true); err != nil {
		return fmt.Errorf("%w: %w", ErrPang, err)
	}
	select {
	case v := <-ch:
		if v == atomYes {
			return nil
		}
		return fmt.Errorf("%w: %s answered %v", ErrPang, node, v)
	case <-p.done:
		return fmt.Errorf("%w: %w", ErrPang, p.err)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrPang, ctx.Err())
	}
}

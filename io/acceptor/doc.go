// Package acceptor accepts TCP connections for a service, in the style of
// Erlang's ranch: a listening socket, a pool of acceptors under a
// supervisor, a connection-handler behaviour and a connection limit.
//
// Without it every TCP service writes the same loop: own a netio.Listener
// in active mode, start an actor for each Accepted connection, hand it the
// socket with ControllingProcess, arm the listener again, and decide what a
// crash of any of them takes down. Here a service writes the Handler and
// starts a Listener:
//
//	type echo struct {
//		actor.ServerBase // no-op HandleCall, HandleCast, Terminate
//		cn *netio.Conn
//	}
//
//	func (e *echo) Init(c *actor.Context, cn *netio.Conn) error {
//		e.cn = cn
//		return cn.SetActive(netio.Once)
//	}
//
//	func (e *echo) HandleInfo(c *actor.Context, msg any) {
//		switch m := msg.(type) {
//		case netio.Data:
//			e.cn.Send(m.Bytes)
//			e.cn.SetActive(netio.Once)
//		case netio.Closed:
//			c.Stop(actor.Normal)
//		}
//	}
//
//	l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return &echo{} },
//		acceptor.Acceptors(4), acceptor.MaxConns(1000))
//	... l.Addr() ...
//	l.Stop(ctx)
//
// # The tree
//
// A Listener is a supervision tree (rest_for_one, started in this order,
// stopped in reverse):
//
//	conns      a simple_one_for_one supervisor of the connection actors
//	           (temporary: a handler that ends, or crashes, is not
//	           restarted; its crash is reported, and closes only its own
//	           connection, which its actor owns)
//	listener   the actor that owns the listening socket; it asks the socket
//	           for as many connections as there are acceptors ready for
//	           one, and hands each to a ready acceptor
//	acceptors  a one_for_one supervisor of Acceptors(n) acceptors: each
//	           starts a connection actor under conns, makes it the
//	           socket's owner and hands it the socket, then asks the
//	           listener for the next
//
// A crashed acceptor is restarted alone (a connection it was handing over
// is closed); a crashed listener is restarted, on the same port (even for
// an address that asked for port 0), with fresh acceptors, and the
// connections already handed over live on. Start runs the tree under a
// supervisor of its own; ChildSpec embeds it in a service's tree instead
// (New, then ChildSpec), where it stops in its turn, after the children
// that come after it. The kernel accepts (the poller, in active mode): the
// acceptors do the rest, so that starting connection actors and handing
// sockets over runs on several schedulers while the listener only
// dispatches.
//
// # Handlers
//
// A Handler is a gen_server whose Init is given its connection, called once
// the connection's actor owns the socket and before it takes any message:
// it may read with the blocking Conn.Recv, set the socket active
// (SetActive(netio.Once), then handle netio.Data and netio.Closed in
// HandleInfo), trap exits (so that a shutdown runs Terminate), or return an
// error to refuse the connection (the actor stops with that reason, the
// socket is closed, Terminate is not called, as after gen_server's init
// failure; actor.ErrIgnore stops it quietly, with reason normal). The
// socket is passive when Init runs; the option Active(mode) sets mode once
// Init has returned nil, as Init's last line would. Embed actor.ServerBase
// for no-op HandleCall, HandleCast and Terminate. Init must not return
// actor.Continue: call actor.ContinueAfter from it (a Handler that is an
// actor.Continuer gets its HandleContinue).
//
// # The connection limit
//
// MaxConns(n) bounds the connections accepted and not yet ended (Conns):
// a connection counts from the listener's accept until its connection
// actor exits (however: it stopped, crashed or was killed), whether or not
// it still holds the socket. At the limit the listener accepts nothing:
// new connections wait in the kernel's listen backlog (then the kernel
// refuses them) until a connection actor ends, and then one is accepted
// for each that ended. Unlike ranch's max_connections, which lets each
// acceptor take one connection past the limit and hold it, the count is
// exact: Conns never exceeds n. Without MaxConns there is no limit. With
// or without one, a failed accept (EMFILE: out of file descriptors) pauses
// accepting for a backoff (10 ms doubling up to 1 s), reported through
// System.Log, instead of crashing the listener.
//
// # Errors
//
// New and Start check their arguments: ErrBadOption (wrapped, saying
// which) for a nil newHandler or a bad option. Start's other errors are
// the tree's start error, which wraps the cause for errors.Is: a bad
// address (netio.ErrBadAddress), an address in use (unix.EADDRINUSE),
// actor.ErrStopped after the System's Shutdown. A Listener runs in one
// tree at a time: a second start while it runs is ErrRunning. Stop of a
// Listener embedded with ChildSpec is ErrEmbedded (stop the tree it is
// in).
//
// # Concurrency
//
// A *Listener's methods are safe for concurrent use. Its counts are
// snapshots. A connection accepted happens before its Handler's Init; a
// Handler's Init returning nil happens before its first callback.
package acceptor

// Package netio is Colony's socket IO: TCP sockets owned by actors, in the
// style of Erlang's gen_tcp, driven by one epoll poller goroutine per System.
//
// The package lives in directory io/ but is named netio, so that it does not
// shadow the standard library's io in files that need both:
//
//	import netio "github.com/colonyrt/colony/io"
//
// # Ownership
//
// Every socket (a *Conn or a *Listener) has a controlling actor, its owner.
// The socket is tied to the owner's life through actor.System.Hold: when the
// owner dies, the socket is closed, and while it is open it counts toward
// System.Wait's "nothing left to do". ControllingProcess moves ownership
// (gen_tcp:controlling_process); only the owner may do it. System.Shutdown
// closes every socket this way and returns once the poller goroutine has
// exited and closed its fds (it is a System.Helper).
//
// # Active and passive delivery
//
// A socket is passive (Off) when created. In passive mode the owner reads with
// the blocking Conn.Recv (or Listener.Accept), which waits inside its handler:
// the scheduler role is handed off while it waits, other actors keep running.
//
// SetActive(Once) asks the poller to deliver the next chunk of input as one
// message to the owner, then fall back to passive; SetActive(N(k)) delivers k
// messages and then a Passive message (SetActive(N(k)) while an N budget is
// left adds k to it, as {active, N} does in OTP; Once and Off replace it).
// The messages are:
//
//	Data{Conn, Bytes}      a chunk of input (never empty)
//	Closed{Conn}           the peer closed its side (EOF); the socket stays
//	                       open for writing (half-close) until Close
//	Error{Conn, Err}       a socket error (e.g. ECONNRESET), followed by Closed
//	Passive{Conn}          an N(k) budget ran out
//	Drained{Conn}          queued output has been fully written (see Send)
//	Accepted{Listener, Conn}  a listener in active mode accepted a connection;
//	                       the new Conn is owned by the listener's owner, passive
//
// Messages about one socket reach its owner in the order the poller produced
// them. A Data message sent happens before the owner's Receive of it.
//
// # Output and backpressure
//
// Conn.Send never blocks and never drops: it writes what the kernel accepts
// and queues the rest (copied) in the socket; the poller writes the queue out
// when the kernel has room and then sends Drained to the owner. Send fails
// with ErrBackpressure (and queues nothing) when the queue already holds
// SendQueueLimit bytes, so a producer learns of a slow peer instead of
// growing memory without bound. Close with bytes still queued returns
// ErrUnsent: Close never discards queued bytes silently. The owner's death
// closes the socket the same way, and there is no one left to tell: an owner
// that sends a last reply and stops loses whatever the kernel had not taken.
// To get it out, wait for Drained (when Pending is not 0) before stopping.
//
// # Errors
//
// Operational failures are sentinel errors (ErrClosed, ErrTimeout is
// actor.ErrTimeout, ErrBadAddress, ErrBackpressure, ErrActive, ErrUnsent,
// ErrRegistered, actor.ErrNotOwner) or *net.OpError-like wrapped syscall
// errors (ECONNREFUSED, ECONNRESET), testable with errors.Is. No input from a
// peer or a caller can crash the poller.
//
// # Edge vs level
//
// Sockets are registered once, edge-triggered (EPOLLET) for input and output;
// the poller keeps per-socket "readable"/"writable" flags, so an edge that
// arrives while the owner is not asking for input is remembered, not lost,
// and re-arming (SetActive) never needs an epoll_ctl call. See the design
// note in poller.go.
package netio

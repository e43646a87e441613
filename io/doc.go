// Package netio is Colony's socket IO: TCP sockets owned by actors, in the
// style of Erlang's gen_tcp, driven by one poller goroutine per System on
// one of several backends (epoll, io_uring, Go's netpoller: see Backends).
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
// owner dies (whatever the reason, a kill included), the socket is closed as
// Close closes it, and while it is open it counts toward System.Wait's
// "nothing left to do". ControllingProcess moves ownership
// (gen_tcp:controlling_process); only the owner may do it. System.Shutdown
// closes every socket this way and returns once the poller goroutine has
// exited and closed its fds (it is a System.Helper); see "Closing" for the
// output still queued then.
//
// # Active and passive delivery
//
// A socket is passive (Off) when created. In passive mode the owner reads with
// the blocking Conn.Recv (or Listener.Accept), which waits inside its handler:
// the scheduler role is handed off while it waits, other actors keep running.
//
// Or it reads without waiting, with Conn.TryRead (OTP socket's recv with
// nowait): what the socket has goes into the caller's buffer, and when
// there is nothing TryRead says ErrWouldBlock and the owner is sent one
// Readable{Conn} when input, or its end, comes. The bytes are never
// copied and no message carries them, so a server that reads into a
// pooled buffer and sends from it handles a round trip with no garbage
// (the TCP echo benchmark's Colony server is written so).
//
// SetActive(Once) asks the poller to deliver the next chunk of input as one
// message to the owner, then fall back to passive; SetActive(N(k)) delivers k
// messages and then a Passive message (SetActive(N(k)) while an N budget is
// left adds k to it, as {active, N} does in OTP; Once and Off replace it);
// SetActive(On) delivers all input as it comes, with no end and no flow
// control ({active, true}). The messages are:
//
//	Data{Conn, Bytes}      a chunk of input (never empty)
//	Closed{Conn}           the peer closed its side (EOF); the socket stays
//	                       open for writing (half-close) until Close
//	Error{Conn, Err}       a socket error (e.g. ECONNRESET): on a read in
//	                       active mode, followed by Closed; on writing out
//	                       queued output, sent whatever the mode (the Send
//	                       that queued it had returned nil) and not followed
//	                       by Closed: the input side ends in its own time
//	Passive{Conn}          an N(k) budget ran out
//	Readable{Conn}         a passive Conn that TryRead found empty has input
//	                       or its end to read (one per ErrWouldBlock; a hint)
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
// growing memory without bound.
//
// Conn.SendWait is the blocking send, with gen_tcp's flow control: while
// more than the Conn's high watermark is queued it waits, up to its timeout,
// until the poller has written the queue down to the low watermark, and
// then writes and queues its bytes as Send does (SetWatermarks, gen_tcp's
// {high_watermark, H} and {low_watermark, L}; defaults
// DefaultHighWatermark, 64 KiB, and DefaultLowWatermark, 32 KiB, where
// gen_tcp has 8 and 4: see their doc). It waits inside the runtime, as Recv
// does: the scheduler role is handed off, other actors keep running; a
// plain goroutine passes a nil Context. Any actor or goroutine may call it,
// several at once (each one's bytes stay together), beside the owner's own
// Recv. The timeout is gen_tcp's {send_timeout, T}, with one difference: a
// SendWait that times out (actor.ErrTimeout) has queued nothing of its
// bytes, where gen_tcp's send has queued them and an unknown part has gone
// out, so the stream is intact and the caller may retry. SetSendTimeoutClose
// is {send_timeout_close, true}: the timeout then also closes the Conn,
// abortively (the peer sees a reset, not a cut stream that ends in EOF).
// Close, the owner's death, Shutdown, Stop and CloseWrite end a SendWait
// (ErrClosed, ErrWriteClosed), and so does a broken connection (the wrapped
// error of its write). Send does not wait for the watermarks, but what it
// queues counts toward them; SendWait is bounded by the watermarks, not by
// SendQueueLimit.
//
// # Closing
//
// Output still queued when a Conn is closed, by Close or by its owner's
// death, is not lost, as with gen_tcp (whose port writes its queue out
// before it closes the fd): the poller goes on writing it in the background
// and closes the fd once it is all written and the peer has acknowledged
// it (and the FIN after it), so the peer reads every byte and then EOF. An actor may send a last reply and stop, or be stopped, with no
// wait for Drained. Close does not block, and from Close on the Conn is
// closed to its owner: its calls return ErrClosed and no message about it
// is sent (no Drained, no Error). While its output is being written out,
// input is read and dropped: a socket closed with input unread is reset by
// the kernel, which discards the output it still held. So a Conn closed
// with nothing queued lingers the same way while the kernel still holds
// output the peer has not acknowledged (a last reply Send handed to the
// kernel whole); one with none left is closed at once, input unread or not,
// as gen_tcp's is.
//
// A peer that never reads cannot hold the fd forever: the output must be
// written out within the Conn's linger timeout (SetLinger; DefaultLinger,
// 30 s, unless changed), measured from the close. When it runs out, the
// rest is discarded and the connection reset: the peer's read fails with
// ECONNRESET (after the bytes it had already been sent), not an EOF that
// would pass a cut stream off as whole. SetLinger(0) is an abortive close,
// as SO_LINGER {on, 0}: Close discards the queue at once, returns ErrUnsent
// saying how many bytes, and resets the connection. ErrUnsent is Close's
// result only when it discards output: otherwise nil.
//
// The poller, and so System.Wait and System.Shutdown, wait for the output of
// closed sockets to be written out. Shutdown gives it what is left of its
// ctx; when ctx ends first, the sockets still being written out are reset
// (their output discarded) and Shutdown returns ctx's error once the poller
// has exited, with no fd left. Stop does not wait: it discards what is
// queued and resets those connections.
//
// # Errors
//
// Operational failures are sentinel errors (ErrClosed, ErrTimeout is
// actor.ErrTimeout, ErrBadAddress, ErrBackpressure, ErrActive, ErrUnsent,
// ErrRegistered, ErrWriteClosed, ErrBadWatermarks, ErrBadLimit,
// ErrBadLength, actor.ErrNotOwner) or *net.OpError-like wrapped syscall errors
// (ECONNREFUSED, ECONNRESET), testable with errors.Is. No input from a peer
// or a caller can crash the poller.
//
// # Backends
//
// The poller waits on one of these (SetBackend, before a System's first
// socket; else the environment variable COLONY_IO_BACKEND; else the
// platform's default), all with the same API, messages and guarantees:
//
//	Epoll     Linux (the default there): epoll, edge-triggered
//	Uring     Linux 6.1 or later: io_uring's multishot poll on the same
//	          sockets, one submitter thread with deferred task work;
//	          falls back to Epoll, with a log line, where io_uring_setup
//	          fails or the kernel is older
//	Portable  every GOOS (the default on macOS, the BSDs, Windows...):
//	          Go's net package, so the runtime's netpoller (kqueue, IOCP)
//
// Portable has a goroutine per connection (as a goroutine-per-connection
// server has) and these differences, none of which breaks a guarantee
// above: up to 16 connections per listener are accepted ahead while the
// owner is passive, and outside unix (Windows) up to one chunk of input
// per connection is read ahead into user space too (a 4 KiB buffer,
// 64 KiB while reads fill that; on unix the reader only waits, and the
// socket is read when the owner asks, as on epoll);
// "written" (Drained, Pending, the watermarks) counts up to 64 KiB that a
// writer goroutine is handing to the kernel; and outside Linux, where it
// cannot ask the kernel what the peer has acknowledged, a lingering close
// ends at the peer's FIN (or the linger timeout) rather than at the
// acknowledgement of ours, and a close with nothing left in user space
// closes at once. The package's tests inspect the kernel (/proc, socket
// ioctls) and run on Linux, on every backend; kqueue has no backend of its
// own. See backend.go and portable.go.
//
// # Edge vs level
//
// On epoll, sockets are registered once, edge-triggered (EPOLLET) for input and output;
// the poller keeps per-socket "readable"/"writable" flags, so an edge that
// arrives while the owner is not asking for input is remembered, not lost,
// and re-arming (SetActive) never needs an epoll_ctl call. See the design
// note in poller.go.
package netio

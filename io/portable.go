// The portable backend: sockets on Go's net package, so the runtime's own
// netpoller (kqueue on darwin and the BSDs, IOCP on Windows, epoll on
// Linux) does the waiting, on every GOOS Go supports.
//
// Design note.
//
// Problem. The poller and the sock state machine (poller.go, sock.go) want
// edge-style readiness events and non-blocking reads, writes and accepts
// (backend.go). Go's net.Conn offers only blocking calls, each of which
// parks its goroutine on the runtime's netpoller. So the backend turns
// the blocking calls into the non-blocking interface with a few
// goroutines per socket and a small buffer in user space standing in for
// the kernel's:
//
//   - Input: a reader goroutine per connection turns readiness into evIn
//     events. Where the OS gives the connection a descriptor with
//     non-blocking reads (unix), the reader only waits: each time it is
//     asked to (demand), it waits until the socket is readable with a
//     one-byte MSG_PEEK through the RawConn (on EAGAIN, parked on the
//     runtime's netpoller) and posts evIn, and endpoint.read reads on the
//     descriptor itself, as the epoll backend does; a read that ends the
//     sock's edge (EAGAIN, or a short read: poller.go, step 3) asks the
//     reader to wait again. So no input waits in user space, and a
//     connection holds no buffer at all, idle or busy: its goroutine is
//     all it costs. (Reading a chunk ahead into a pooled 4 KiB buffer,
//     as below, kept one in use per connection with input in flight:
//     10k connections of the TCP echo held tens of MiB of them, doubled
//     by the collector's pacing, and the backend's peak memory was above
//     a goroutine-per-connection server's.) Elsewhere (Windows) the
//     reader reads one chunk (4 KiB, or readChunk while reads fill that)
//     into a pooled buffer, stores it in the endpoint and posts evIn;
//     endpoint.read copies from the stored chunk, and once it is all
//     taken returns the buffer to the pool and asks the reader to read
//     again; until that read has brought something it returns errAgain.
//     Either way the kernel's receive buffer and TCP's window throttle
//     the peer as they do on epoll. The end of input or an error is
//     posted with evRdHup, and ends the reader.
//   - Output: endpoint.write first writes what the kernel takes at once,
//     where the OS has a non-blocking write on the descriptor (unix;
//     tryWrite), which is all of it unless the kernel's buffer is full.
//     The rest, up to sendBufMax bytes, it copies into the endpoint's send
//     buffer (the user-space stand-in for the kernel's) and starts a writer
//     goroutine, which hands it to net.Conn.Write (blocking); while it
//     writes, write is errAgain. When the kernel has
//     taken it all, the writer posts evOut (if a write was refused, or a
//     close waits) and exits. A write error is stored and returned by the
//     next write (EPIPE, ECONNRESET).
//   - Accept: an acceptor goroutine per listener accepts up to acceptAhead
//     connections ahead and posts evIn for each; endpoint.accept takes one.
//   - Dial: a dialler goroutine runs net.Dialer.DialContext, cancelled by
//     a close, and posts evOut when it is done (connectErr says how).
//   - Events go to one queue (portableBackend.q), which the poller
//     goroutine drains in wait: a mutex-guarded slice and a cap-1 channel
//     permit, the permit sent after the append, so a post that races the
//     poller's look at an empty queue leaves the permit and no wake is lost.
//
// Slots. Sockets here are not fds the package owns (net closes a failed
// dial's fd itself, and Windows has handles, not small integers), so each
// endpoint takes a slot from a process-wide free list (netSlots), freed by
// its close. The free list hands out the most recently freed slot first:
// slots are reused at once, as fd numbers are, so the generation check
// (poller.go, step 2) is exercised here exactly as on epoll. A goroutine of
// a closed endpoint may still post an event for its old (slot, gen): it is
// a lookup miss or a generation mismatch.
//
// Semantics that differ from epoll's (the package doc, "Backends"):
//
//   - Up to acceptAhead accepted connections per listener, and outside
//     unix up to one chunk of input per connection, are taken ahead into
//     user space while the owner is passive: a peer sees its connection,
//     or its bytes, taken a little earlier. (On unix input stays in the
//     kernel until the sock reads it, as on epoll.)
//   - Send's "written" means copied into the send buffer above (at most
//     sendBufMax a socket, as the kernel's send buffer is): Drained, the
//     watermarks and Pending count what has left the sock's queue for it.
//     A close writes it out before the FIN (shutdownWrite waits for the
//     writer).
//   - Lingering: on Linux the backend asks the kernel (SIOCOUTQ, TCP_INFO,
//     through the RawConn) as the epoll backend does, and a goroutine waits
//     through the netpoller for the FIN's acknowledgement. Elsewhere it
//     cannot see the kernel's queue: a close with nothing in user space
//     closes at once (input unread or arriving later may then make the
//     kernel reset the connection, as on any OS), and a lingering close
//     ends at the peer's FIN or at the linger timeout instead of at the
//     acknowledgement of ours.
//   - Cost: a goroutine per connection (two while output is being
//     written), as a goroutine-per-connection server has, and one
//     goroutine hand-off per chunk of input.
//
// The descriptor (unix). The sock's reads and writes go to the fd that
// net's RawConn.Control reported at the start, not through Control each
// time (which made a closure and a RawConn a call: garbage on every
// round trip). That is safe because every such call is made under the
// endpoint's mu with closed false, and close sets closed under mu before
// it closes the net.Conn: the number cannot have been closed, let alone
// reused, while a read or write on it is under way.
//
// Locks: netEndpoint.mu is taken after sock.mu and poller.mu (remove
// closes under poller.mu); portableBackend.mu after netEndpoint.mu is never
// needed: goroutines post with no endpoint lock held.

package netio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
)

const (
	// sendBufMax bounds a socket's send buffer in user space (see the
	// design note, Output): a write takes at most this much more.
	sendBufMax = 64 << 10
	// acceptAhead bounds the connections an acceptor takes ahead.
	acceptAhead = 16
)

// portableBackend is a poller's event queue. See the design note.
type portableBackend struct {
	mu     sync.Mutex // guards q, head, dead
	q      []ioEvent  // posted events; q[head:] not yet taken
	head   int
	dead   bool
	permit chan struct{} // cap 1: sent after an append (see the design note)

	timer *time.Timer // the poller goroutine's deadline; owned by it
}

func newPortable() *portableBackend {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &portableBackend{permit: make(chan struct{}, 1), timer: t}
}

func (b *portableBackend) kind() Backend { return Portable }
func (b *portableBackend) busy() bool    { return false }

// post queues ev for the poller; dropped once the poller has exited (every
// socket of it is closed: the event is stale).
func (b *portableBackend) post(ev ioEvent) {
	b.mu.Lock()
	if b.dead {
		b.mu.Unlock()
		return
	}
	b.q = append(b.q, ev)
	b.mu.Unlock()
	select {
	case b.permit <- struct{}{}:
	default: // a permit is pending: the poller looks at the queue after taking it
	}
}

func (b *portableBackend) add(s *sock) error {
	e, ok := s.ep.(*netEndpoint)
	if !ok {
		return fmt.Errorf("%w: a %s socket for the portable poller", ErrBackendInUse, s.ep.family())
	}
	e.start(b, s.gen)
	return nil
}

func (b *portableBackend) remove(s *sock) error { return s.ep.close() }

func (b *portableBackend) wake() { b.post(ioEvent{}) }

func (b *portableBackend) close() {
	b.mu.Lock()
	b.dead = true
	b.q, b.head = nil, 0
	b.mu.Unlock()
}

// wait takes the events posted, waiting for the first one until deadline.
func (b *portableBackend) wait(evs []ioEvent, deadline time.Time) (int, error) {
	armed := false
	defer func() {
		if armed {
			b.timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		if n := copy(evs, b.q[b.head:]); n > 0 {
			b.head += n
			if b.head == len(b.q) {
				clear(b.q)
				b.q, b.head = b.q[:0], 0
			}
			b.mu.Unlock()
			return n, nil
		}
		b.mu.Unlock()
		if deadline.IsZero() {
			<-b.permit
			continue
		}
		d := time.Until(deadline)
		if d <= 0 {
			return 0, nil
		}
		if !armed {
			b.timer.Reset(d)
			armed = true
		}
		select {
		case <-b.permit:
		case <-b.timer.C:
			armed = false
			return 0, nil
		}
	}
}

// netSlots is the free list of portable slots (see the design note).
var netSlots struct {
	mu   sync.Mutex
	free []int // most recently freed last
	next int   // slots below it have been handed out
}

func allocSlot() int {
	netSlots.mu.Lock()
	defer netSlots.mu.Unlock()
	if n := len(netSlots.free); n > 0 {
		s := netSlots.free[n-1]
		netSlots.free = netSlots.free[:n-1]
		return s
	}
	netSlots.next++
	return netSlots.next - 1
}

func freeSlot(s int) {
	netSlots.mu.Lock()
	netSlots.free = append(netSlots.free, s)
	netSlots.mu.Unlock()
}

// The reader's buffers, pooled in two sizes: a read goes into a small one
// (smallChunk) unless the connection's last read filled one, then into a
// large one (readChunk), until a read fills less than a small one again.
// Ten thousand connections of small messages then hold at most 40 MiB of
// buffers at once, not 640.
const smallChunk = 4 << 10

var (
	smallChunks = sync.Pool{New: func() any { b := make([]byte, smallChunk); return &b }}
	chunks      = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}
)

// putChunk returns a reader's buffer to its pool.
func putChunk(bp *[]byte) {
	if len(*bp) == smallChunk {
		smallChunks.Put(bp)
	} else {
		chunks.Put(bp)
	}
}

// netEndpoint is one socket of the portable backend. slot is immutable;
// be and gen are set by start (under mu) and immutable after; c and fd
// are set at creation, or by the dialler under mu. Everything else is
// guarded by mu. Kept small (a server holds one per connection): what
// only a listener or a dial needs is behind acc and dl.
type netEndpoint struct {
	slot int

	mu     sync.Mutex
	be     *portableBackend
	gen    uint32
	closed bool
	c      *net.TCPConn     // a connection (nil while dialling)
	l      *net.TCPListener // a listener
	// fd is c's descriptor where the OS has non-blocking reads and writes
	// on it (unix; -1 elsewhere): the sock's reads and the fast path of
	// its writes are made on it directly (see the design note, Input).
	// Used only under mu while closed is false: close sets closed under
	// mu before it closes c, so the number cannot name another file then.
	fd int
	// demand (cap 1) asks the reader (or a waiting acceptor) to go on;
	// close closes it, which ends their wait for good.
	demand chan struct{}

	// input
	in    []byte  // the chunk read ahead and not yet taken (fd < 0)
	inBuf *[]byte // the pooled buffer under in
	inErr error   // the end of input (io.EOF) or the read's error, behind in

	// output
	outErr   error  // a write failed: the next write returns it
	out      []byte // accepted by write; the writer's while writing is set
	writing  bool   // a writer goroutine runs, writing out
	wantOut  bool   // a write found no room: post evOut when there is
	shutWant bool   // shutdownWrite asked; done by the writer when out is empty
	shut     bool   // CloseWrite done
	abort    bool   // setAbort asked
	finWatch bool   // a FIN watcher runs (finWaiting, Linux)

	acc *netAccepts // a listener's connections taken ahead
	dl  *netDialing // a dial's
}

// netAccepts: connections accepted ahead (see the design note, Accept).
// Guarded by the listener's netEndpoint.mu.
type netAccepts struct {
	q   []*net.TCPConn
	err error
}

// netDialing: a dial under way or done. to and ctx are immutable; the
// rest is guarded by the endpoint's mu.
type netDialing struct {
	to       netip.AddrPort
	ctx      context.Context
	cancel   context.CancelFunc // a close cancels the dial
	dialling bool               // not done yet
	err      error
}

func newNetEndpoint() *netEndpoint {
	return &netEndpoint{slot: allocSlot(), fd: -1, demand: make(chan struct{}, 1)}
}

// newConnEndpoint is an endpoint for an established connection.
func newConnEndpoint(c *net.TCPConn) *netEndpoint {
	e := newNetEndpoint()
	e.c, e.fd = c, connFD(c)
	return e
}

// netListen listens on ap (tcp4 or tcp6, as the fd backend's socket).
func netListen(ap netip.AddrPort) (endpoint, int, error) {
	l, err := net.ListenTCP(tcpNet(ap), net.TCPAddrFromAddrPort(ap))
	if err != nil {
		return nil, 0, sysErr("listen", netErr(err))
	}
	e := newNetEndpoint()
	e.l = l
	return e, e.slot, nil
}

// netDial makes an endpoint that dials ap once registered (start).
func netDial(ap netip.AddrPort) (endpoint, int, error) {
	e := newNetEndpoint()
	ctx, cancel := context.WithCancel(context.Background())
	e.dl = &netDialing{to: ap, ctx: ctx, cancel: cancel, dialling: true}
	return e, e.slot, nil
}

func tcpNet(ap netip.AddrPort) string {
	if ap.Addr().Is4() {
		return "tcp4"
	}
	return "tcp6"
}

// netErr reduces a net error to its cause (the errno, where there is one),
// for the sock to wrap as the fd backend's errors are wrapped.
func netErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	return err
}

func (e *netEndpoint) family() family { return famNet }
func (e *netEndpoint) String() string { return fmt.Sprintf("slot %d", e.slot) }

// start begins the endpoint's goroutines for registration (be, gen).
// Called by the backend's add, under poller.mu.
func (e *netEndpoint) start(be *portableBackend, gen uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.be, e.gen = be, gen
	switch {
	case e.l != nil:
		go e.acceptLoop(e.l)
	case e.dl != nil && e.dl.dialling:
		go e.dial()
	case e.c != nil:
		e.signalLocked() // wait for (or read) the first input
		go e.readLoop(e.c, e.fd)
		e.postLocked(evOut) // writable, as epoll's registration reports
	}
}

// postLocked posts an event of mask for this registration. e.mu held;
// registered.
func (e *netEndpoint) postLocked(mask uint32) {
	e.be.post(ioEvent{slot: int32(e.slot), gen: e.gen, mask: mask})
}

// post is postLocked for the goroutines, which hold no lock.
func (e *netEndpoint) post(mask uint32) {
	e.mu.Lock()
	be, gen := e.be, e.gen
	e.mu.Unlock()
	be.post(ioEvent{slot: int32(e.slot), gen: gen, mask: mask})
}

// readLoop is the reader goroutine (see the design note, Input). With a
// descriptor of its own (fd >= 0) it only waits: each time demand asks,
// it waits until the socket has input, an end or an error, and posts
// evIn; the sock reads on fd itself. Without one it reads a chunk ahead.
func (e *netEndpoint) readLoop(c *net.TCPConn, fd int) {
	rc, rcErr := c.SyscallConn()
	if fd >= 0 && rcErr == nil {
		e.waitLoop(rc)
		return
	}
	big := false // the last read filled its buffer: use a large one
	for {
		if _, ok := <-e.demand; !ok {
			return // closed
		}
		var n int
		var err error
		var bp *[]byte
		if rcErr == nil {
			_, sockErr, werr := waitReadable(rc, nil)
			switch {
			case werr != nil && errors.Is(werr, net.ErrClosed):
				return
			case sockErr != nil:
				err = sockErr // the peek took it: no read would see it now
			}
		}
		if err == nil {
			if big {
				bp = chunks.Get().(*[]byte)
			} else {
				bp = smallChunks.Get().(*[]byte)
			}
			n, err = c.Read(*bp)
			big = n == len(*bp) || (big && n > smallChunk)
		}
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			if bp != nil {
				putChunk(bp)
			}
			return
		}
		if n > 0 {
			e.in, e.inBuf = (*bp)[:n], bp
		} else if bp != nil {
			putChunk(bp)
		}
		mask := uint32(evIn)
		if err != nil {
			if err != io.EOF {
				err = netErr(err)
			}
			e.inErr = err
			mask |= evRdHup
		}
		if n == 0 && err == nil {
			e.signalLocked() // nothing read: read again
		}
		e.postLocked(mask)
		e.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitLoop is readLoop for an endpoint that reads on its fd: it turns
// readiness into evIn events, one per demand, holding no buffer (an idle
// or a busy connection costs its goroutine and nothing more). The end of
// input or a socket error ends it, posted with evRdHup: nothing comes
// after either.
func (e *netEndpoint) waitLoop(rc syscall.RawConn) {
	var pk peeker // one per goroutine: the peek's closure is made once
	for {
		if _, ok := <-e.demand; !ok {
			return // closed
		}
		n, sockErr, werr := waitReadable(rc, &pk)
		if werr != nil {
			return // closed (net.ErrClosed), or nothing more to wait with
		}
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return
		}
		mask := uint32(evIn)
		end := sockErr != nil || n == 0
		switch {
		case sockErr != nil:
			e.inErr = netErr(sockErr) // the peek took it: no read would see it now
		case n == 0:
			e.inErr = io.EOF // for finWaiting; read() finds the end on the fd
		}
		if end {
			mask |= evRdHup // an end or an error: read() finds it
		}
		e.postLocked(mask)
		e.mu.Unlock()
		if end {
			return
		}
	}
}

func (e *netEndpoint) read(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fd >= 0 && !e.closed {
		return e.readFDLocked(p)
	}
	if len(e.in) > 0 {
		n := copy(p, e.in)
		e.in = e.in[n:]
		if len(e.in) == 0 {
			putChunk(e.inBuf)
			e.in, e.inBuf = nil, nil
			if e.inErr == nil {
				e.signalLocked() // the reader took the last demand
			}
		}
		return n, nil
	}
	switch {
	case e.inErr == io.EOF:
		return 0, nil
	case e.inErr != nil:
		return 0, e.inErr
	}
	return 0, errAgain
}

// readFDLocked reads on the fd (see the design note, Input). A read that
// ends the sock's edge (EAGAIN, or a short read: poller.go, step 3) asks
// the reader to wait for the next input. e.mu held, not closed.
func (e *netEndpoint) readFDLocked(p []byte) (int, error) {
	if e.inErr != nil && e.inErr != io.EOF {
		return 0, e.inErr // the reader's peek took the socket's error
	}
	n, err := fdRead(e.fd, p)
	switch {
	case err == errAgain:
		e.signalLocked()
		return 0, errAgain
	case err != nil:
		return 0, err
	case n > 0 && n < len(p):
		e.signalLocked()
	}
	return n, nil
}

func (e *netEndpoint) write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.outErr != nil:
		return 0, e.outErr
	case e.inErr != nil && e.inErr != io.EOF:
		return 0, e.inErr // reset: the kernel's next write would fail too
	case e.c == nil || e.shutWant:
		return 0, errAgain // dialling (the sock waits for writability first)
	case e.writing:
		e.wantOut = true // the writer posts evOut once the kernel has it all
		return 0, errAgain
	}
	// The fast path, where the OS allows one (unix): a non-blocking
	// write of what the kernel takes now, on the connection's fd (no
	// goroutine and no copy; nothing else writes it, writing being
	// false). The rest, if any, goes to the writer goroutine.
	done, err := tryWrite(e.fd, p)
	if err != nil {
		e.outErr = netErr(err)
		return 0, e.outErr
	}
	if done == len(p) {
		return done, nil
	}
	n := min(len(p)-done, sendBufMax)
	e.out = append(e.out[:0], p[done:done+n]...)
	e.writing = true
	go e.writeLoop(e.c, e.out)
	return done + n, nil
}

// writeLoop is the writer goroutine (see the design note, Output): it
// writes buf, e.out, which no one touches while writing is set. Room
// appears only when the kernel has taken all of it, as it appears in a
// kernel's send buffer only when the peer takes bytes: a buffer the
// writer had taken but the kernel had not made the sock think the
// kernel had room, and the watermarks saw a queue drain that had not.
func (e *netEndpoint) writeLoop(c *net.TCPConn, buf []byte) {
	_, err := c.Write(buf)
	e.mu.Lock()
	if err != nil && !e.closed {
		e.outErr = netErr(err)
	}
	e.writing = false
	shut := e.shutWant && e.outErr == nil && !e.closed && !e.shut
	if shut {
		e.shut = true
	}
	// Tell the sock: a write that found no room, a lingering close
	// waiting for the FIN (finWaiting), a write error.
	tell := !e.closed && (e.wantOut || e.shutWant || e.outErr != nil)
	e.wantOut = false
	e.mu.Unlock()
	if shut {
		_ = c.CloseWrite()
	}
	if tell {
		e.post(evOut)
	}
}

func (e *netEndpoint) accept() (endpoint, int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.acc
	if a == nil {
		return nil, 0, errAgain
	}
	if len(a.q) > 0 {
		c := a.q[0]
		a.q[0] = nil
		a.q = a.q[1:]
		if len(a.q) == acceptAhead-1 {
			e.signalLocked() // the acceptor waits for room
		}
		ne := newConnEndpoint(c)
		return ne, ne.slot, nil
	}
	if err := a.err; err != nil {
		a.err = nil
		e.signalLocked() // the acceptor retries once the error is taken
		return nil, 0, err
	}
	return nil, 0, errAgain
}

// signalLocked leaves a demand for the reader or the acceptor (one is
// enough: cap 1). e.mu held; nothing once closed.
func (e *netEndpoint) signalLocked() {
	if e.closed {
		return
	}
	select {
	case e.demand <- struct{}{}:
	default:
	}
}

// acceptLoop is the acceptor goroutine (see the design note, Accept).
func (e *netEndpoint) acceptLoop(l *net.TCPListener) {
	for {
		c, err := l.AcceptTCP()
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			if c != nil {
				c.Close()
			}
			return
		}
		if e.acc == nil {
			e.acc = &netAccepts{}
		}
		wait := false
		if err != nil {
			e.acc.err = sysErr("accept", netErr(err))
			wait = true
		} else {
			e.acc.q = append(e.acc.q, c)
			wait = len(e.acc.q) >= acceptAhead
		}
		e.postLocked(evIn)
		e.mu.Unlock()
		if wait {
			if _, ok := <-e.demand; !ok {
				return // closed
			}
		}
	}
}

// dial is the dialler goroutine (see the design note, Dial).
func (e *netEndpoint) dial() {
	var d net.Dialer
	dl := e.dl
	c, err := d.DialContext(dl.ctx, tcpNet(dl.to), dl.to.String())
	e.mu.Lock()
	defer e.mu.Unlock()
	dl.dialling = false
	if e.closed {
		if c != nil {
			c.Close()
		}
		return
	}
	if err != nil {
		dl.err = netErr(err)
		e.postLocked(evOut | evErr)
		return
	}
	e.c = c.(*net.TCPConn)
	e.fd = connFD(e.c)
	e.signalLocked()
	go e.readLoop(e.c, e.fd)
	e.postLocked(evOut)
}

func (e *netEndpoint) connectErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.dl == nil:
		return nil
	case e.dl.dialling:
		return errAgain
	}
	return e.dl.err
}

func (e *netEndpoint) shutdownWrite() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil || e.shutWant {
		return nil
	}
	e.shutWant = true
	if e.writing {
		return nil // the writer sends the FIN after the output
	}
	e.shut = true
	return netErr(e.c.CloseWrite())
}

func (e *netEndpoint) setAbort() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.abort = true
	if e.c != nil {
		_ = e.c.SetLinger(0)
	}
}

// kernelOutput: output in user space, or (Linux) unacknowledged in the
// kernel.
func (e *netEndpoint) kernelOutput() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return false
	}
	if e.writing {
		return true
	}
	n, known := kernelUnacked(e.c)
	return known && n > 0
}

// finWaiting: the FIN is not sent yet (the writer still writes: whether
// or not the peer has closed, closing now would lose that output), or not
// acknowledged (Linux: TCP_INFO, and a watcher posts an event when it is);
// elsewhere, the peer's FIN has not come (see the design note).
func (e *netEndpoint) finWaiting(peerClosed bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return false
	}
	if !e.shut {
		return e.shutWant && e.outErr == nil
	}
	if peerClosed {
		return false
	}
	waiting, known := finWait1(e.c)
	if !known {
		return e.inErr == nil
	}
	if waiting && !e.finWatch {
		e.finWatch = true
		go e.watchFin(e.c)
	}
	return waiting
}

// watchFin waits through the netpoller for the FIN's acknowledgement and
// posts an event for it (Linux; finWaiting).
func (e *netEndpoint) watchFin(c *net.TCPConn) {
	awaitFinAck(c)
	e.mu.Lock()
	e.finWatch = false
	if !e.closed {
		e.postLocked(evOut)
	}
	e.mu.Unlock()
}

func (e *netEndpoint) localAddr() *net.TCPAddr {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.l != nil:
		a, _ := e.l.Addr().(*net.TCPAddr)
		return a
	case e.c != nil:
		a, _ := e.c.LocalAddr().(*net.TCPAddr)
		return a
	}
	return nil
}

func (e *netEndpoint) remoteAddr() *net.TCPAddr {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return nil
	}
	a, _ := e.c.RemoteAddr().(*net.TCPAddr)
	return a
}

// close closes the socket and frees the slot; the goroutines see done or
// net.ErrClosed and exit. Idempotent.
func (e *netEndpoint) close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.demand) // the reader and the acceptor give up
	if e.dl != nil {
		e.dl.cancel()
	}
	if e.inBuf != nil {
		putChunk(e.inBuf)
		e.in, e.inBuf = nil, nil
	}
	var accq []*net.TCPConn
	if e.acc != nil {
		accq, e.acc.q = e.acc.q, nil
	}
	c, l := e.c, e.l
	e.mu.Unlock()
	for _, a := range accq {
		a.Close()
	}
	var err error
	switch {
	case c != nil:
		err = c.Close()
	case l != nil:
		err = l.Close()
	}
	freeSlot(e.slot)
	return netErr(err)
}

package dist

// Connections: one reader and one writer goroutine per peer.
//
// Why goroutines on net, not io/'s poller: a distribution connection is a
// stream of length-prefixed frames that must be parsed, decoded and
// delivered in order, and written from many senders. On the poller, the
// connection would be an actor: every chunk of input a message to it (an
// allocation, a mailbox push, a wake, an activation) before the frame
// parser sees it, and every outgoing frame a message to it too, or a lock
// around its socket shared with the poller. A reader goroutine blocked in
// Read costs what a parked goroutine costs (Go's netpoller, the same epoll
// underneath), parses frames straight out of its buffer and delivers with
// System.Send; a writer goroutine gathers whatever senders queued and
// writes it with one writev. There are as many connections as peers (tens,
// not the millions io/ is built for), so two goroutines each is cheap. The
// measurement is in docs/distribution.md.
//
// Ticks (net_ticktime): the writer wakes every TickTime/4. If nothing was
// written since the last wake it writes a tick (an empty frame); if nothing
// was read since the last wake it counts a silent interval, and after 4 in
// a row the connection is down (net_tick_timeout): a peer is declared down
// between 1 and 5/4 TickTime after its last frame (OTP's window is 3/4 to
// 5/4). Writes have a deadline
// of TickTime, so a peer that stops reading is noticed too.
//
// Ending: the first of the reader's error, the writer's error or timeout,
// Disconnect, Stop and a replacing connection calls close, which closes the
// socket, so both goroutines return. The node is told (connDown: every link
// and monitor over the connection fires with noconnection) by the reader,
// once, as the last thing it does. Invariant: nothing the connection
// carried is delivered after its signals have fired. OTP drops what arrives
// on a connection being taken down, so no message of a remote actor comes
// after the Down that its node's loss caused. So the reader delivers no
// frame once closing is closed (frames still in its buffer are dropped), and
// the signals fire only after its last delivery. Told from another
// goroutine, as the writer or Disconnect would, a monitor could get its
// Down and then messages the reader still held.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
)

// Reasons a connection ends, as connDown and OnNodeDown report them.
var (
	// ErrTickTimeout: nothing was read from the peer for about TickTime
	// (OTP's net_tick_timeout).
	ErrTickTimeout = errors.New("dist: net_tick_timeout (peer not responding)")
	// ErrConnectionClosed: the peer closed the connection.
	ErrConnectionClosed = errors.New("dist: connection closed by peer")
	// ErrDisconnected: Disconnect, or a new connection from the same peer
	// replaced this one.
	ErrDisconnected = errors.New("dist: disconnected")
)

// readBuffer is the reader's buffer: many small frames per read(2).
const readBuffer = 64 << 10

type conn struct {
	n    *Node
	p    *peer
	nc   net.Conn
	info handshake.Peer

	reads    atomic.Uint64 // frames read, ticks included; written by the reader
	closing  chan struct{}
	once     sync.Once
	reason   error         // written in close, before closing is closed
	readDone chan struct{} // closed when the reader has stopped and told the node

	// Owned by the reader goroutine.
	fr     frameReader
	atoms  atomRefs
	frags  fragments
	dec    etf.Decoder
	budget *nodeBudget // what the peer may introduce (nodebudget.go)
	warned map[int]bool
	names  map[string]string
}

func newConn(n *Node, p *peer, nc net.Conn, info handshake.Peer) *conn {
	c := &conn{n: n, p: p, nc: nc, info: info, closing: make(chan struct{}), readDone: make(chan struct{})}
	// Buffered: a frame's length and body, and the frames behind it,
	// come in one read, not two reads a frame.
	c.fr = frameReader{r: bufio.NewReaderSize(nc, readBuffer), max: n.cfg.MaxMessage}
	c.frags.max = n.cfg.MaxMessage
	c.frags.canDrop = c.canDrop
	c.dec = etf.Decoder{Node: n.etfNode, MaxSize: n.cfg.MaxMessage}
	// The peer's own identity; its name was checked by the handshake.
	self, _ := actor.RemotePid(actor.RemoteID{Node: actor.Atom(info.Name), Creation: info.Creation})
	c.budget = newNodeBudget(n.cfg.NodeIdentityBurst, n.cfg.NodeIdentityRate, self, time.Now)
	c.dec.NewNode = func(p actor.Pid) error {
		err := c.budget.spend(p)
		if err != nil {
			n.stats.nodeBudgetExceeded.Add(1)
		}
		return err
	}
	return c
}

// close ends the connection with reason, once; the reader tells the node
// (see Ending above). It does not block.
func (c *conn) close(reason error) {
	c.once.Do(func() {
		c.reason = reason
		close(c.closing)
		c.nc.Close()
	})
}

// shut is close, then a wait until the reader has stopped and told the
// node, so that every link and monitor over the connection has fired when
// it returns. Never called by the reader itself.
func (c *conn) shut(reason error) {
	c.close(reason)
	<-c.readDone
}

// testHookFrame, when set, runs in the reader after it has read a frame
// and before it delivers it, with the local node's name (tests only: a
// reader held there holds the frames behind it in its buffer).
var testHookFrame atomic.Pointer[func(local actor.Atom)]

func (c *conn) readLoop() {
	var end error
	defer func() {
		c.close(end) // a no-op if it was closed already; c.reason is set either way
		c.n.connDown(c, c.reason)
		close(c.readDone)
	}()
	for {
		b, owned, over, err := c.fr.next()
		if err != nil {
			end = c.readErr(err)
			return
		}
		if over > 0 {
			if err := c.oversized(b, over); err != nil {
				end = c.readErr(err)
				return
			}
			c.reads.Add(1)
			continue
		}
		if h := testHookFrame.Load(); h != nil {
			(*h)(c.n.name)
		}
		select {
		case <-c.closing:
			return // closed elsewhere: drop what is left (see Ending above)
		default:
		}
		c.reads.Add(1)
		if len(b) == 0 {
			continue // a tick
		}
		if err := c.frame(b, owned); err != nil {
			end = err
			return
		}
	}
}

func (c *conn) readErr(err error) error {
	select {
	case <-c.closing:
		return c.reason
	default:
	}
	switch {
	case errors.Is(err, io.EOF):
		return ErrConnectionClosed
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w mid-frame", ErrConnectionClosed)
	}
	return err
}

// frame handles one frame's body (see wire.go for the formats). owned: b
// is the frame's own buffer, never written again, so large binaries may
// share it (etf.Decoder.ShareInput).
func (c *conn) frame(b []byte, owned bool) error {
	c.dec.ShareInput = owned
	if b[0] == passThrough {
		clear(c.atoms.refs[:c.atoms.nrefs]) // no header: no atom cache references
		c.atoms.nrefs = 0
		return c.terms(b[1:], true)
	}
	if len(b) < 2 || b[0] != versionMagic {
		return protoErr("frame starts with %d", b[0])
	}
	switch b[1] {
	case distHeader:
		rest, err := c.atoms.header(b[2:])
		if err != nil {
			return err
		}
		return c.terms(rest, false)
	case fragHeader:
		if len(b) < 18 {
			return protoErr("truncated fragment header")
		}
		seq, id := be64(b[2:]), be64(b[10:])
		rest, err := c.atoms.header(b[18:])
		if err != nil {
			return err
		}
		whole, err := c.frags.start(seq, id, c.atoms.refs[:c.atoms.nrefs], rest)
		if err != nil || whole == nil {
			return err
		}
		return c.reassembled(whole)
	case fragCont:
		if len(b) < 18 {
			return protoErr("truncated fragment header")
		}
		whole, err := c.frags.cont(be64(b[2:]), be64(b[10:]), b[18:])
		if err != nil || whole == nil {
			return err
		}
		return c.reassembled(whole)
	}
	return protoErr("frame of kind %d", b[1])
}

// reassembled decodes a fragmented message with its header's atom table.
func (c *conn) reassembled(p *partial) error {
	c.n.stats.fragmentedIn.Add(1)
	if p.dropped {
		c.refuse(p.size)
		return nil
	}
	clear(c.atoms.refs[:c.atoms.nrefs])
	c.atoms.nrefs = copy(c.atoms.refs[:], p.refs)
	c.dec.ShareInput = true // the reassembled buffer is the message's own
	return c.terms(p.asm.bytes(), false)
}

// terms decodes the control message and the optional message of a frame
// and dispatches them. versioned: each term has its version byte (a
// pass-through frame).
func (c *conn) terms(b []byte, versioned bool) error {
	c.dec.AtomRefs = c.atoms.refs[:c.atoms.nrefs] // this frame's header table
	decode := c.dec.Decode
	if versioned {
		decode = c.dec.DecodeVersioned
	}
	if fast := b; !versioned || (len(b) > 0 && b[0] == versionMagic) {
		if versioned {
			fast = b[1:]
		}
		if t, rest, ok := c.n.parseSendCtl(fast, c.dec.NewNode); ok {
			return c.fastSend(t, rest, decode)
		}
		if err := c.budget.err; err != nil { // refused in a skipped trace token
			return protoErr("control message: %w", err)
		}
	}
	ctl, n, err := decode(b)
	if err != nil {
		return protoErr("control message: %w", err)
	}
	b = b[n:]
	var msg any
	hasMsg := len(b) > 0
	if hasMsg {
		if msg, n, err = decode(b); err != nil {
			if tooLarge(err) && isSend(ctl) {
				c.refuse(len(b)) // a compressed message past MaxMessage
				return nil
			}
			return protoErr("message: %w", err)
		}
		if n != len(b) {
			return protoErr("%d bytes after the message", len(b)-n)
		}
	}
	return c.dispatch(ctl, msg, hasMsg)
}

// fastSend decodes and delivers the message of a send whose control
// message parseSendCtl read.
func (c *conn) fastSend(t sendTarget, rest []byte, decode func([]byte) (any, int, error)) error {
	if len(rest) == 0 {
		return protoErr("a send without its message")
	}
	msg, n, err := decode(rest)
	if err != nil {
		if tooLarge(err) {
			c.refuse(len(rest)) // a compressed message past MaxMessage
			return nil
		}
		return protoErr("message: %w", err)
	}
	if n != len(rest) {
		return protoErr("%d bytes after the message", len(rest)-n)
	}
	switch {
	case t.remote:
		c.n.stats.dropped.Add(1)
	case t.name != nil:
		c.n.deliverName(actor.Atom(c.nameOf(t.name)), msg)
	default:
		c.n.deliver(t.pid, msg)
	}
	return nil
}

// nameOf returns the string of a registered name read from a frame,
// from a small per-connection table so that a name sent to often is not
// a new string each time.
func (c *conn) nameOf(b []byte) string {
	if s, ok := c.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if c.names == nil {
		c.names = make(map[string]string)
	}
	if len(c.names) < maxNames {
		c.names[s] = s
	}
	return s
}

// maxNames bounds a connection's table of names (nameOf).
const maxNames = 256

func be64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

func (c *conn) writeLoop() {
	period := c.n.cfg.TickTime / 4
	t := time.NewTicker(period)
	defer t.Stop()
	var spare [][]byte
	var lastReads uint64
	silent := 0
	wrote := false
	write := func(bufs net.Buffers) bool {
		c.nc.SetWriteDeadline(time.Now().Add(c.n.cfg.TickTime))
		if _, err := bufs.WriteTo(c.nc); err != nil {
			c.close(c.writeErr(err))
			return false
		}
		wrote = true
		return true
	}
	for {
		select {
		case <-c.closing:
			return
		case <-c.p.wake:
			frames := c.p.take(spare)
			if len(frames) == 0 {
				spare = frames
				continue
			}
			ok := write(append(net.Buffers(nil), frames...))
			clear(frames)
			spare = frames[:0]
			if !ok {
				return
			}
		case <-t.C:
			if r := c.reads.Load(); r != lastReads {
				lastReads, silent = r, 0
			} else if silent++; silent >= 4 {
				c.n.logf(levelError, "dist: ** Node %s not responding ** ** Removing (timedout) connection **", c.p.name)
				c.close(ErrTickTimeout)
				return
			}
			if !wrote && !write(net.Buffers{tick}) {
				return
			}
			wrote = false
		}
	}
}

func (c *conn) writeErr(err error) error {
	select {
	case <-c.closing:
		return c.reason
	default:
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: a write waited %v", ErrTickTimeout, c.n.cfg.TickTime)
	}
	return err
}

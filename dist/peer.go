package dist

// Peers and their send queues.
//
// Problem. A Send to a remote pid must not block, must keep one sender's
// messages in order, and may come before there is a connection (Erlang
// connects on the first send, and queues what is sent meanwhile). Until the
// handshake ends, the peer's flags are unknown, and they decide the frames'
// format (a distribution header or pass-through, fragments or not, SEND or
// SEND_SENDER).
//
// Protocol. A peer is the node's record of one remote node, from the first
// send (or an incoming handshake) until that connection fails or goes down;
// a peer is never reused, so a later send makes a new one and connects
// again. Its queue has two phases, both under qmu:
//
//   - connecting (!up): a send encodes its message's body at once (so an
//     unencodable value is the sender's error, not a silent loss later) and
//     appends (control, body) to pending;
//   - up: flip, with qmu held, turns pending into frames with the peer's
//     flags and sets up and enc; from then on a sender encodes its whole
//     frame outside the lock and takes qmu only to append it.
//
// A sender that saw !up appends to pending under qmu, and flip drains
// pending under qmu, so no message is left behind or reordered across the
// flip; the frames of one message are appended in one critical section, so
// a fragmented message is never interleaved with another. The writer
// goroutine takes the whole frame list at once (take) and writes it with
// one writev.
//
// dead (under qmu) ends the peer: sends are dropped from then on, as Erlang
// drops messages to a node it cannot reach, and what was queued is dropped.
//
// The node's lock n.mu guards the peers map and each peer's dialing,
// accepting and c fields; lock order: n.mu before qmu.

import (
	"errors"
	"sync"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// maxPending bounds the messages queued for a peer while it connects.
const maxPending = 1 << 16

// ErrBusy: the peer's send queue is full (Config.MaxQueue bytes not yet
// written, or maxPending messages waiting for the connection). The
// message was not queued.
var ErrBusy = errors.New("dist: send queue full")

type peer struct {
	name actor.Atom
	// done is closed when the peer ends (failed to connect, or down); err
	// says why and is written before.
	done chan struct{}
	err  error
	upc  chan struct{} // closed when the connection is up

	// Guarded by the node's mu.
	dialing   bool  // a dial for this peer is under way
	accepting bool  // an incoming handshake for this peer is under way
	c         *conn // the connection, once up; never changes after

	sig peerSignals // links and monitors over this peer (link.go)

	qmu     sync.Mutex // guards the fields below
	up      bool
	dead    bool
	enc     encoder
	pending []pendingMsg
	frames  [][]byte
	qbytes  int
	max     int                   // Config.MaxQueue; immutable
	wake    chan struct{}         // cap 1: frames were queued
	spawns  map[etf.Ref]*spawnReq // spawn requests waiting on this peer (spawn.go)
}

// pendingMsg is a message queued before the connection is up: its control
// tuple and its encoded body (no version byte).
type pendingMsg struct {
	ctl    control
	body   []byte
	hasMsg bool
}

func newPeer(name actor.Atom, maxQueue int) *peer {
	return &peer{
		name: name, done: make(chan struct{}), upc: make(chan struct{}),
		max: maxQueue, wake: make(chan struct{}, 1),
	}
}

// send queues one message. It never blocks; a peer that ended drops it.
func (p *peer) send(enc *etf.Encoder, ctl control, msg any, hasMsg bool) error {
	p.qmu.Lock()
	if p.dead {
		p.qmu.Unlock()
		return nil
	}
	if !p.up {
		p.qmu.Unlock()
		var body []byte
		if hasMsg {
			var err error
			if body, err = enc.Append(nil, msg); err != nil {
				return err
			}
		}
		p.qmu.Lock()
		defer p.qmu.Unlock()
		if p.up {
			// Up meanwhile: build the frames from the body, under the lock
			// so that they follow what flip queued.
			frames, size := p.enc.framesOf(ctl, body, hasMsg)
			return p.queueLocked(frames, size, ctl.signal)
		}
		if p.dead {
			return nil
		}
		if len(p.pending) >= maxPending && !ctl.signal {
			return ErrBusy
		}
		p.pending = append(p.pending, pendingMsg{ctl, body, hasMsg})
		return nil
	}
	e := p.enc
	p.qmu.Unlock()
	frames, size, err := e.frames(ctl, msg, hasMsg)
	if err != nil {
		return err
	}
	if frames == nil { // nothing to send to this peer (see encoder.appendCtl)
		return nil
	}
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return p.queueLocked(frames, size, ctl.signal)
}

// queueLocked appends one message's frames; force takes them past the
// bound (a signal). Called with qmu held.
func (p *peer) queueLocked(frames [][]byte, size int, force bool) error {
	if p.dead || frames == nil {
		return nil
	}
	if p.qbytes > 0 && p.qbytes+size > p.max && !force {
		return ErrBusy
	}
	p.frames = append(p.frames, frames...)
	p.qbytes += size
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// flip makes the peer up: what was pending becomes frames in the peer's
// format, and later sends encode frames directly.
func (p *peer) flip(e encoder) {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	p.enc = e
	p.up = true
	for _, m := range p.pending {
		frames, size := e.framesOf(m.ctl, m.body, m.hasMsg)
		p.queueLocked(frames, size, true) // accepted when it was queued
	}
	p.pending = nil
}

// take hands the writer what is queued, in order, and empties the queue;
// spare is a slice to reuse for the next batch.
func (p *peer) take(spare [][]byte) [][]byte {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	f := p.frames
	p.frames = spare[:0]
	p.qbytes = 0
	return f
}

// end marks the peer dead with err, drops its queue, and closes done. It
// runs once; it reports whether this call ended it.
func (p *peer) end(err error) bool {
	p.qmu.Lock()
	if p.dead {
		p.qmu.Unlock()
		return false
	}
	p.dead = true
	p.pending, p.frames, p.qbytes = nil, nil, 0
	p.err = err
	spawns := p.spawns
	p.spawns = nil
	p.qmu.Unlock()
	close(p.done)
	p.sig.down(p.name, err) // every link and monitor over the peer fires (link.go)
	p.failSpawns(spawns)    // spawn.go: noconnection
	return true
}

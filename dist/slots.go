package dist

// The handshake slots: the table of incoming connections that have not
// proved the cookie yet. accept.go's design note says why it is shaped so;
// this file is the table alone, with no sockets in it, so that its policy
// is tested on its own (slots_internal_test.go).

import (
	"io"
	"net"
	"net/netip"
	"sync"
)

// slotState is where an admitted connection stands. Every state is
// guarded by gate.mu; the handshake goroutine moves a slot from silent to
// named, the gate moves it to evicted or stopped, and release ends it
// whatever its state.
type slotState uint8

const (
	// slotSilent: accepted, its name not read yet. Silent slots are the
	// first evicted.
	slotSilent slotState = iota
	// slotNamed: the peer's name was read (it speaks the protocol);
	// evicted only when its source has no silent slot left.
	slotNamed
	// slotEvicted: closed by the gate to make room; out of the table,
	// still counted in running until its goroutine releases it.
	slotEvicted
	// slotStopped: closed by the gate because the node is stopping.
	slotStopped
)

// hsSlot is one admitted connection.
type hsSlot struct {
	nc  io.Closer  // immutable: closed by the gate on eviction or stop
	src netip.Addr // immutable: the source it counts against

	prev, next *hsSlot   // guarded by gate.mu: the table, oldest first
	state      slotState // guarded by gate.mu
}

// admitResult says what admit did.
type admitResult uint8

const (
	admitted  admitResult = iota // a slot was free
	evicting                     // the slot of victim was taken; close it
	overLimit                    // too many goroutines still unwinding: refuse
	gateShut                     // the node is stopping: refuse, uncounted
)

// gate is the table of handshake slots. Its zero value is not usable:
// newGate makes one.
type gate struct {
	max int // immutable: slots in the table

	mu         sync.Mutex
	head, tail *hsSlot            // guarded by mu: the table, oldest first
	n          int                // guarded by mu: slots in the table
	running    int                // guarded by mu: admitted and not released (table and evicted)
	bySrc      map[netip.Addr]int // guarded by mu: table slots per source, no zero entries
	shut       bool               // guarded by mu
}

func newGate(max int) *gate {
	return &gate{max: max, bySrc: make(map[netip.Addr]int)}
}

// sourceOf is the source a connection from addr counts against: its IPv4
// address, or the /64 of its IPv6 address (one host's usual allocation).
func sourceOf(addr net.Addr) netip.Addr {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	a := ta.AddrPort().Addr().Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}

// admit gives a connection from src a slot. When the table is full it
// takes the victim's (result evicting: the caller closes victim.nc, outside
// the lock). It refuses (overLimit) only when 2·max goroutines are still
// running, that is when max evicted ones have not exited yet.
func (g *gate) admit(src netip.Addr, nc io.Closer) (s *hsSlot, victim *hsSlot, res admitResult) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.shut:
		return nil, nil, gateShut
	case g.running >= 2*g.max:
		return nil, nil, overLimit
	}
	res = admitted
	if g.n >= g.max {
		victim = g.victimLocked(src)
		g.unlinkLocked(victim)
		victim.state = slotEvicted
		res = evicting
	}
	s = &hsSlot{nc: nc, src: src}
	g.linkLocked(s)
	g.running++
	return s, victim, res
}

// victimLocked chooses the slot a connection from src takes in a full
// table (accept.go, "Eviction"): in the source that holds the most slots,
// src's newcomer counted in its own (src itself when it ties), that
// source's oldest silent slot, else its oldest.
func (g *gate) victimLocked(src netip.Addr) *hsSlot {
	most := 0
	for k, c := range g.bySrc {
		if k == src {
			c++
		}
		most = max(most, c)
	}
	own := g.bySrc[src] > 0 && g.bySrc[src]+1 == most
	var oldest *hsSlot
	for s := g.head; s != nil; s = s.next {
		if own {
			if s.src != src {
				continue
			}
		} else if g.bySrc[s.src] != most || s.src == src {
			// src is not among the heaviest (with its newcomer counted,
			// it holds fewer than most, so its own count is below most).
			continue
		}
		if s.state == slotSilent {
			return s
		}
		if oldest == nil {
			oldest = s
		}
	}
	if oldest == nil {
		panic("dist: handshake slots: a full table with no slot in its heaviest source")
	}
	return oldest
}

// named records that s's peer has sent its name; false if s was evicted
// or stopped meanwhile.
func (g *gate) named(s *hsSlot) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.state == slotSilent {
		s.state = slotNamed
	}
	return s.state == slotNamed
}

// release ends s (its handshake is over, one way or another) and returns
// the state it ended in: slotEvicted or slotStopped when the gate closed
// its connection, whatever the handshake's outcome.
func (g *gate) release(s *hsSlot) slotState {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.state == slotSilent || s.state == slotNamed {
		g.unlinkLocked(s)
	}
	g.running--
	return s.state
}

// close refuses every later admit and returns the connections in the
// table, marked stopped, for the caller to close.
func (g *gate) close() []io.Closer {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = true
	var out []io.Closer
	for s := g.head; s != nil; {
		next := s.next
		out = append(out, s.nc)
		g.unlinkLocked(s)
		s.state = slotStopped
		s = next
	}
	return out
}

// inUse is the number of slots in the table.
func (g *gate) inUse() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *gate) linkLocked(s *hsSlot) {
	s.prev, s.next = g.tail, nil
	if g.tail != nil {
		g.tail.next = s
	} else {
		g.head = s
	}
	g.tail = s
	g.n++
	g.bySrc[s.src]++
}

func (g *gate) unlinkLocked(s *hsSlot) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		g.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		g.tail = s.prev
	}
	s.prev, s.next = nil, nil
	g.n--
	if g.bySrc[s.src]--; g.bySrc[s.src] == 0 {
		delete(g.bySrc, s.src)
	}
}

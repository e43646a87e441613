package dist

// The node identity budget: what one connection may introduce to the
// process's table of remote node identities (actor/remote.go).
//
// The problem. Every pid in a peer's terms names a node (name, creation),
// and a pid of a node no pid in the process names yet makes a new identity.
// The table gives back identities nobody holds, so a made-up node costs
// memory only while something holds a pid of it; but a peer could still
// make the node intern and collect without end, or have its pids held (an
// actor that keeps the pids it is sent) and grow the table as fast as it
// can send. OTP has no such bound: node names are atoms, and a peer that
// sends a million distinct ones fills the atom table and the VM stops. So
// each connection gets a budget, as OTP bounds atoms, but per peer: a
// peer past it is disconnected, and only its own connection suffers.
//
// Counting. An identity counts when decoding one of the connection's
// frames introduced it (actor.InternRemotePid's created; etf's
// Decoder.NewNode), not each time a pid of it arrives. The budget is a
// token bucket: burst identities at once, refilled at rate a second. The
// peer's own identity (its handshake name and creation) is interned when
// the connection starts and held by it for its life: never counted.
//
// Pins. An identity the connection introduced is held by the connection
// (a Pid in pins) until two pin windows have begun since, or the
// connection ends, so a peer that keeps naming a third node (a member of
// its cluster) does not introduce it again after every collection and
// spend its budget on the collector's schedule. At most burst identities
// are pinned a window, so the pins hold at most 2*burst pids.
//
// Owned by the connection's reader goroutine (it decodes): no locks.

import (
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// ErrNodeBudget: a peer introduced node identities past its connection's
// budget (Config.NodeIdentityBurst and NodeIdentityRate); the connection
// is closed with it.
var ErrNodeBudget = errors.New("dist: peer introduced new node identities past its budget")

// pinWindow is how long a connection's pins last at least (see Pins).
const pinWindow = time.Minute

type nodeBudget struct {
	burst, rate float64
	tokens      float64
	last        time.Time // when tokens was last refilled
	self        actor.Pid // the peer's own identity: held, never counted
	pins, old   []actor.Pid
	rotated     time.Time // when pins began
	now         func() time.Time
	// err is spend's refusal, kept: a decoder that swallows its error (the
	// fast path's, skipping a trace token) hands the term to the generic
	// one, which finds the identity already made, so the reader asks here.
	err error
}

func newNodeBudget(burst, rate int, self actor.Pid, now func() time.Time) *nodeBudget {
	t := now()
	return &nodeBudget{burst: float64(burst), rate: float64(rate), tokens: float64(burst),
		last: t, rotated: t, self: self, now: now}
}

// spend is the connection's Decoder.NewNode: p's identity was introduced
// by one of its frames. It takes a token and pins p, or says the budget is
// spent.
func (b *nodeBudget) spend(p actor.Pid) error {
	t := b.now()
	if dt := t.Sub(b.last); dt > 0 {
		b.tokens = min(b.burst, b.tokens+dt.Seconds()*b.rate)
		b.last = t
	}
	if b.tokens < 1 {
		b.err = fmt.Errorf("%w (%d at once, %d a second)", ErrNodeBudget, int(b.burst), int(b.rate))
		return b.err
	}
	b.tokens--
	if t.Sub(b.rotated) >= pinWindow {
		clear(b.old) // drop what the window before last pinned
		b.old, b.pins = b.pins, b.old[:0]
		b.rotated = t
	}
	if len(b.pins) < int(b.burst) {
		b.pins = append(b.pins, p)
	}
	return nil
}

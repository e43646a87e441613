package mailbox

import (
	"errors"
	"sync/atomic"
)

// ErrFull is returned by Send when a bounded mailbox holds its bound.
var ErrFull = errors.New("mailbox: full")

// ErrClosed is returned by Send and Deliver after Close: the owner is gone
// and the message was not queued.
var ErrClosed = errors.New("mailbox: closed")

// closedMark is what Close leaves in n: so negative that no number of
// racing producers' increments brings it back to zero.
const closedMark = -1 << 62

// Mailbox is an actor's mailbox: a user lane for messages, optionally
// bounded, and a system lane for control signals that the owner handles
// before any message. Neither lane ever blocks a sender.
//
// Which lane a thing travels on is decided by ordering, not importance:
// anything that must stay in order with a sender's messages (a Down, a
// trapped Exit, a call reply delivered as a message) goes on the user lane
// through Deliver, which ignores the bound — it is never dropped. The system
// lane carries signals that have no order with messages and must overtake
// them (stop requests, the runtime's own control records).
//
// Init must be called before the mailbox is shared; it may not be copied.
type Mailbox struct {
	user Lane
	// sys is allocated by the first Signal (most actors never get one):
	// producers race to CAS it in, the loser uses the winner's lane.
	sys atomic.Pointer[Lane]
	// in counts user-lane messages accepted (pushed, or being pushed);
	// out counts those the consumer has recorded as consumed (Consumed, in
	// batches; the consumer is its only writer, so recording is a store,
	// and out doubles as the count of messages ever taken). Producers add
	// to in before pushing, the consumer adds to out after popping, so
	// in - out never under-counts what is in the lane. With a bound, a
	// producer that finds in - out past the bound after its add backs the
	// add out and fails: concurrent producers may be refused early near
	// the bound, never let past it (a producer's add ranks it after every
	// accepted message, and out only grows by messages really consumed).
	// Close stores closedMark in in.
	in    atomic.Int64
	out   atomic.Int64
	bound int64 // immutable after Init; 0 means unbounded
}

// Init prepares a zero Mailbox for use and sets its bound (0 or negative:
// unbounded). Call it once, before the mailbox is shared. (It writes only
// what the zero value lacks: on the spawn path every store counts.)
func (m *Mailbox) Init(bound int) {
	m.user.Init()
	if bound < 0 {
		bound = 0
	}
	m.bound = int64(bound)
}

// Send appends a user message. It fails with ErrFull, and the message is not
// queued, when the mailbox is bounded and full.
func (m *Mailbox) Send(v any, nc *Cache) error {
	n := m.in.Add(1)
	if n < 0 {
		return ErrClosed
	}
	if m.bound > 0 && n-m.out.Load() > m.bound {
		if m.in.Add(-1) < 0 {
			// Close swapped in between our add and this back-out, so its
			// count of messages never taken includes ours: to its owner
			// this message was accepted and dropped at Close, and it must
			// not also be refused (the caller would count it twice: once
			// in the dropped total, once as a refusal).
			// Nobody will pop the lane again, so it is not pushed.
			return nil
		}
		return ErrFull
	}
	m.user.Push(v, nc)
	return nil
}

// Deliver appends to the user lane ignoring the bound: for signals that
// become messages (Down, Exit) and must keep their order with messages.
// nc, if not nil, supplies the node (Lane.Push).
func (m *Mailbox) Deliver(v any, nc *Cache) error {
	if m.in.Add(1) < 0 {
		return ErrClosed
	}
	m.user.Push(v, nc)
	return nil
}

// Close marks the mailbox closed and returns how many user messages were in
// it and not yet recorded as consumed: the messages that will never be
// handled. Every Send or Deliver either counted before Close (and is in that
// number) or fails with ErrClosed afterwards, so a caller can account for
// every message exactly once. Consumer only.
func (m *Mailbox) Close() int {
	n := m.in.Swap(closedMark)
	if n < 0 {
		return 0
	}
	return int(n - m.out.Load())
}

// Signal appends to the system lane.
func (m *Mailbox) Signal(v any) {
	l := m.sys.Load()
	if l == nil {
		nl := new(Lane)
		nl.Init()
		if m.sys.CompareAndSwap(nil, nl) {
			l = nl
		} else {
			l = m.sys.Load()
		}
	}
	l.Push(v, nil)
}

// PopSignal removes the oldest system signal. Consumer only.
func (m *Mailbox) PopSignal() (any, bool) {
	if l := m.sys.Load(); l != nil {
		return l.Pop(nil)
	}
	return nil, false
}

// Pop removes the oldest user message. Consumer only. The count behind Len
// is not updated here but by Consumed, which the consumer calls once per
// batch: one atomic store per batch instead of one per message.
func (m *Mailbox) Pop(nc *Cache) (any, bool) {
	return m.user.Pop(nc)
}

// Consumed records that the consumer popped k messages since the last call.
// Consumer only.
func (m *Mailbox) Consumed(k int) {
	if k != 0 {
		m.out.Store(m.out.Load() + int64(k)) // single writer
	}
}

// Taken returns how many user messages the consumer has recorded as
// consumed since Init. Safe from any goroutine.
func (m *Mailbox) Taken() uint64 { return uint64(m.out.Load()) }

// Settle waits until the user messages whose Send had begun when it was
// called are linked (Lane.Settle): a Pop loop after it sees every message
// whose Send returned before the call. Consumer only.
func (m *Mailbox) Settle() { m.user.Settle() }

// Empty reports whether both lanes are empty of linked entries. Consumer only.
func (m *Mailbox) Empty() bool { return m.user.Empty() && !m.HasSignal() }

// HasSignal reports whether a system signal is linked. Consumer only.
func (m *Mailbox) HasSignal() bool {
	l := m.sys.Load()
	return l != nil && !l.Empty()
}

// Marks is the consumer's position in both lanes, for ChangedSince.
type Marks struct {
	user   Mark
	sysL   *Lane
	sysPos Mark
}

// Marks returns the consumer's position. Consumer only.
func (m *Mailbox) Marks() Marks {
	mk := Marks{user: m.user.Tail()}
	if l := m.sys.Load(); l != nil {
		mk.sysL, mk.sysPos = l, l.Tail()
	}
	return mk
}

// ChangedSince reports whether anything was pushed to either lane since the
// consumer stood at mk. Safe from any goroutine (see Lane.ChangedSince). A
// system lane created since counts as a change: its creator is pushing.
func (m *Mailbox) ChangedSince(mk Marks) bool {
	if m.user.ChangedSince(mk.user) {
		return true
	}
	l := m.sys.Load()
	if l == nil {
		return false
	}
	if mk.sysL == nil {
		return true
	}
	return l.ChangedSince(mk.sysPos)
}

// UserChangedSince is ChangedSince for the user lane alone.
func (m *Mailbox) UserChangedSince(mk Marks) bool { return m.user.ChangedSince(mk.user) }

// Len returns the number of user messages queued (racy snapshot).
func (m *Mailbox) Len() int {
	out := m.out.Load() // first: in is never behind what out has recorded
	n := m.in.Load()
	if n < 0 { // closed
		return 0
	}
	return int(max(n-out, 0))
}

// Bound returns the bound (0: unbounded).
func (m *Mailbox) Bound() int { return int(m.bound) }

package statem

// The event queue and the timeout table: what a state machine holds between
// two callbacks, apart from its state.
//
// Design note.
//
// Problem. gen_statem handles events from three places: the mailbox, an
// internal queue of events it must handle before it looks at the mailbox
// again (postponed events re-queued by a state change, next_event inserts),
// and zero timeouts, which fire once that queue is empty but before the
// mailbox. After each callback a transition reorders them: the event just
// handled may be postponed; a state change puts every postponed event, oldest
// first, at the head of the queue; the callback's next_event inserts go
// before all of that, first inserted first. And timeouts are cancelled by any
// event (the event timeout), by a state change (the state timeout), or only
// by the machine (named timeouts), while a fired timer's message may already
// sit in the mailbox when the timer is cancelled or restarted.
//
// Rejected. (1) Front-first slices with prepends: every insert copies the
// queue. (2) Cancelling a fired timer by flushing its message from the
// mailbox, as OTP's cancel_timer does with a selective receive: a Server
// sees one message at a time and cannot reach into its mailbox.
//
// Protocol. The queue is a stack (stack): its last element is handled
// next, so every insert, which always goes to the head, is an append of
// the inserted events in reverse. Postponed events are kept oldest first.
// A running timer is an entry in timers with a fresh id; its message
// (timerFired) names the key and the id, and is taken only if the entry
// still holds that id: a cancelled or restarted timer's message is stale
// and is dropped when it arrives (generations, STYLE.md 5). A zero timeout
// arms no timer: its entry is marked zero and its key waits in t0q, in the
// order the actions set them, until the queue is empty.
//
// Owner only: a core belongs to one machine's actor and is touched only by
// its callbacks, one at a time.

import (
	"slices"
	"time"

	"github.com/colonyrt/colony/actor"
)

// timerKey names a timeout: its event type and, for a GenericTimeout, its
// name.
type timerKey struct {
	typ  EventType
	name string
}

func (k timerKey) event(msg any) Event { return Event{Type: k.typ, Msg: msg, Name: k.name} }

// timerEntry is a timeout that has not fired: a running timer (ref, id) or
// a zero timeout waiting in t0q.
type timerEntry struct {
	id   uint64
	ref  actor.TimerRef
	msg  any
	zero bool
}

// timerFired is the message a running timeout's timer sends its machine.
type timerFired struct {
	key timerKey
	id  uint64
}

type timerOp uint8

const (
	opStart  timerOp = iota // start (or restart) with d; Infinity cancels
	opUpdate                // change the message; start at 0 if not running
	opCancel
)

// timeoutAction is one timeout action of a callback.
type timeoutAction struct {
	key timerKey
	op  timerOp
	d   time.Duration
	msg any
}

// backend arms and cancels the timers of running timeouts: the actor's
// timers in a machine, a fake clock in the model test.
type backend interface {
	startTimer(msg timerFired, d time.Duration) actor.TimerRef
	cancelTimer(id uint64, ref actor.TimerRef)
}

// core is a machine's event queue and timeout table (see the design note).
type core struct {
	stack     []Event // queued events; the last is handled next
	postponed []Event // oldest first
	timers    map[timerKey]*timerEntry
	t0q       []timerKey // zero timeouts, in firing order
	nextID    uint64
}

// next takes the event to handle before the mailbox: the queue's head, else
// the first zero timeout.
func (q *core) next() (Event, bool) {
	if n := len(q.stack); n > 0 {
		ev := q.stack[n-1]
		q.stack[n-1] = Event{} // drop the references
		q.stack = q.stack[:n-1]
		return ev, true
	}
	if len(q.t0q) > 0 {
		k := q.t0q[0]
		q.t0q = q.t0q[1:]
		e := q.timers[k]
		delete(q.timers, k)
		return k.event(e.msg), true
	}
	return Event{}, false
}

// fired takes a timer's message: the timeout's event if the timer is still
// the one running for its key, else false (a stale message).
func (q *core) fired(m timerFired) (Event, bool) {
	e := q.timers[m.key]
	if e == nil || e.zero || e.id != m.id {
		return Event{}, false
	}
	delete(q.timers, m.key)
	return m.key.event(e.msg), true
}

// cancel stops the timeout k, if it runs.
func (q *core) cancel(b backend, k timerKey) {
	e := q.timers[k]
	if e == nil {
		return
	}
	if e.zero {
		q.t0q = slices.DeleteFunc(q.t0q, func(x timerKey) bool { return x == k })
	} else {
		b.cancelTimer(e.id, e.ref)
	}
	delete(q.timers, k)
}

// transition is what a callback (and the enter calls it led to) decided,
// short of a stop.
type transition struct {
	postpone bool
	changed  bool // the state changed (not a repeat)
	next     []Event
	timeouts []timeoutAction
}

// commit applies tr after handling cur (nil for the start, which handles
// no event): postpone cur, re-queue the postponed events on a state change,
// cancel the timeouts the transition ends, run the timeout actions (the
// last for each key wins), and insert the next events.
func (q *core) commit(b backend, cur *Event, tr *transition) {
	if tr.postpone && cur != nil {
		q.postponed = append(q.postponed, *cur)
	}
	if tr.changed {
		for i := len(q.postponed) - 1; i >= 0; i-- {
			q.stack = append(q.stack, q.postponed[i])
		}
		clear(q.postponed)
		q.postponed = q.postponed[:0]
		q.cancel(b, timerKey{typ: StateTimeout})
	}
	q.cancel(b, timerKey{typ: Timeout}) // any event cancels the event timeout
	q.timeouts(b, tr.timeouts)
	for i := len(tr.next) - 1; i >= 0; i-- {
		q.stack = append(q.stack, tr.next[i])
	}
}

// timeouts runs the timeout actions, the last one for each key only (as
// OTP's loop_timeouts, which walks them from the last). Zero timeouts join
// t0q in the order the actions set them.
func (q *core) timeouts(b backend, acts []timeoutAction) {
	if len(acts) == 0 {
		return
	}
	if q.timers == nil {
		q.timers = map[timerKey]*timerEntry{}
	}
	var zero []timerKey // reversed
	seen := make(map[timerKey]bool, len(acts))
	for i := len(acts) - 1; i >= 0; i-- {
		a := acts[i]
		if seen[a.key] {
			continue
		}
		seen[a.key] = true
		switch {
		case a.op == opCancel || a.op == opStart && a.d == actor.Infinity:
			q.cancel(b, a.key)
		case a.op == opUpdate:
			if e := q.timers[a.key]; e != nil {
				e.msg = a.msg
				continue
			}
			q.timers[a.key] = &timerEntry{zero: true, msg: a.msg}
			zero = append(zero, a.key)
		case a.d == 0:
			q.cancel(b, a.key)
			q.timers[a.key] = &timerEntry{zero: true, msg: a.msg}
			zero = append(zero, a.key)
		default:
			q.cancel(b, a.key)
			q.nextID++
			id := q.nextID
			ref := b.startTimer(timerFired{a.key, id}, a.d)
			q.timers[a.key] = &timerEntry{id: id, ref: ref, msg: a.msg}
		}
	}
	for i := len(zero) - 1; i >= 0; i-- {
		q.t0q = append(q.t0q, zero[i])
	}
}

// Design note: blocking inside a handler.
//
// A handler blocks by opening a wait (BeginWait bumps the actor's epoch),
// registering whatever will end it — a timer, a call's reply cell, a
// monitor — each stamped with (pid, epoch), and then parking its goroutine
// with waitPark until the condition holds. waitPark publishes the wait in
// the slot word (Blocked, or Parked if a new message may end the wait), hands
// the worker's scheduler role to a spare, and sleeps on the worker's resume
// channel. An epoch-matched Wake (or a message, for Parked) queues the actor;
// the scheduler that pops it hands the sleeping goroutine its role. A wake
// that lands between the registration and the park CAS finds the word
// Running and leaves Notified; ParkWait then fails and the loop re-checks its
// condition instead of sleeping — no wake is lost. A wake carrying an older
// epoch is a no-op, so a stale timeout never ends a later wait.
//
// A kill ends every wait: the finaliser's WakeAny queues the actor, the
// goroutine resumes, sees the exit latch and unwinds the handler with the
// exitUnwind panic, which activate recovers (user defers run on the way).
//
// Consumption is flushed at block time. drain records the messages an
// activation pops with one Mailbox.Consumed when the activation ends, not
// one per message (the hot path), so until then the mailbox's count — what
// MailboxBound is checked against — still holds them. A wait can last long
// (a Sleep, a Call, a selective Receive), and with the count left as it was
// a bounded actor blocked on an empty queue would refuse senders. So
// waitPark records what the activation has popped before it
// parks: while a handler is blocked the count is exactly what is in the
// lane (plus sends in progress). Blocking is rare and costs a hand-off, so
// one more atomic add there costs nothing measurable; the per-message path
// keeps no more than a plain increment (worker.popped).

package actor

import (
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/slot"
)

// Infinity is the timeout that never expires.
const Infinity time.Duration = 1<<63 - 1

// exitUnwind is the panic value that unwinds the handler of a killed actor.
type exitUnwind struct{}

// waitPark parks the calling handler's goroutine on the actor's current
// wait. acceptMsgs: a new message should end the park (selective receive).
// It returns when the actor has been woken (the caller re-checks its
// condition) and panics with exitUnwind if the actor was killed.
func (c *Context) waitPark(acceptMsgs bool) {
	p, w := c.p, c.w
	gen := p.pid.gen
	// Flush before parking ("Consumption is flushed at block time"): we
	// still own the consumer side, and the count may not run ahead of the
	// queue while we sleep. w.popped is reset so that drain, when the
	// activation ends, records only what it pops after this.
	p.mbox.Consumed(w.popped)
	w.popped = 0
	var mk = p.mbox.Marks()
	p.g = w // read by the scheduler that pops p, after its Pop (Acquire) pairs with our park CAS (Release)
	if !p.slot.Word.ParkWait(gen, acceptMsgs) {
		p.g = nil // a wake already landed: re-check
		c.checkKilled()
		return
	}
	// We no longer own p. For a message-accepting wait, re-check the
	// producer side (the park protocol of proc.go).
	if acceptMsgs && p.mbox.ChangedSince(mk) && p.slot.Word.WakeMsg(gen) == slot.Enqueue {
		w.push(p.pid, false)
	}
	s := w.role
	w.role = nil
	if s.settleAct() {
		s.st.handoffs.Add(1)
		w.sys.handoff(s)
	} else {
		s.drainToGlobal() // retired while we ran: a fresh role has the index
	}
	// Sleep holding only the actor's stack (labelled with the pid while
	// observing: BlockedStack, observe.go).
	labelled := w.sys.labelBlocked(p)
	ns := <-w.resume
	unlabelBlocked(labelled)
	if ns == nil {
		// The system halted under a blocked handler: unwind it.
		panic(exitUnwind{})
	}
	w.role = ns
	ns.enterAct()
	c.checkKilled()
}

func (c *Context) checkKilled() {
	if c.p.exit.Load() != alive {
		panic(exitUnwind{})
	}
}

// beginWait starts a wait (a new epoch) and unwinds at once if the actor was
// killed before it: BeginWait clears the Notified bit that the kill's wake
// left, so after it nothing but the wait's own timer would wake the handler
// again (a handler killed while it ran, that then waited without a timeout,
// would park forever and keep the System from ever going idle). A kill after BeginWait wakes the wait as usual.
func (c *Context) beginWait() uint32 {
	c.noWaitInMatch()
	epoch := c.p.slot.Word.BeginWait(c.p.pid.gen)
	c.checkKilled()
	return epoch
}

// noWaitInMatch panics if a Receive's match func is running: a wait there
// (Receive, Call, Sleep, Blocking) is a misuse. A wait opens a new epoch,
// so the enclosing Receive's timeout, armed for its own epoch, would wake
// nobody and the Receive outlived its timeout for as long as no message
// came; a nested Receive took messages from the save queue the enclosing
// one was walking, which then returned one twice and lost the next
// (TestBlockingInsideMatchIsRefused, TestNestedReceiveInsideMatchIsRefused).
// Erlang's guards cannot wait either.
func (c *Context) noWaitInMatch() {
	if c.inMatch {
		panic("actor: Receive, Call, Sleep or Blocking inside a Receive match func (a match func must not wait)")
	}
}

// matches runs match on m with inMatch set; a panic in match clears it too.
func (c *Context) matches(match func(any) bool, m any) bool {
	c.inMatch = true
	defer func() { c.inMatch = false }()
	return match(m)
}

// Sleep suspends the handler for d (Erlang's timer:sleep); other actors
// keep running. Messages that arrive meanwhile wait in the mailbox.
func (c *Context) Sleep(d time.Duration) error {
	p := c.proc()
	if d < 0 {
		return ErrNegativeTimeout
	}
	if d == 0 {
		return nil
	}
	sys := c.w.sys
	epoch := c.beginWait()
	var fired atomic.Bool
	ref := sys.tm.armWait(sys, p.pid, epoch, int64(d), &fired, nil)
	defer sys.cancelTimer(ref)
	for !fired.Load() {
		c.waitPark(false)
	}
	p.slot.Word.BeginWait(p.pid.gen) // retire the wait
	return nil
}

// Receive takes the first message, in mailbox order, for which match
// returns true (Erlang's selective receive), waiting up to timeout for one to
// arrive. Skipped messages stay in order for later (the handler gets them
// after it returns, or a later Receive). timeout 0 only looks, and sees
// every message whose Send returned before the Receive (it waits out the
// pushes of other senders in flight ahead of one, a few instructions each);
// Infinity waits forever; negative is ErrNegativeTimeout. A nil match takes any
// message. On timeout it returns ErrTimeout. match must not wait: a
// Receive, Call, Sleep or Blocking inside it panics (a misuse).
func (c *Context) Receive(match func(any) bool, timeout time.Duration) (any, error) {
	p := c.proc()
	c.noWaitInMatch()
	if timeout < 0 {
		return nil, ErrNegativeTimeout
	}
	if match == nil {
		match = func(any) bool { return true }
	}
	e := p.x()
	// 1. Messages skipped by earlier receives, oldest first.
	for i, m := range e.save {
		if c.matches(match, m) {
			e.save = append(e.save[:i:i], e.save[i+1:]...)
			return m, nil
		}
	}
	// 2. The mailbox: only messages not yet looked at are examined.
	sys := c.w.sys
	var fired atomic.Bool
	var ref timerRef
	armed, settled := false, false
	for {
		for {
			m, ok := p.mbox.Pop(c.w.cache())
			if !ok {
				break
			}
			p.mbox.Consumed(1)
			if m, ok = p.accept(sys, m); !ok {
				continue
			}
			if c.matches(match, m) {
				if armed {
					p.slot.Word.BeginWait(p.pid.gen)
				}
				return m, nil
			}
			e.save = append(e.save, m)
		}
		if timeout == 0 && !settled {
			// Only looking, and the lane looks empty: a message whose Send
			// returned before this Receive may still be hidden behind
			// another sender's push that has not linked yet. Wait for the
			// pushes begun by now to link, and look once more.
			settled = true
			p.mbox.Settle()
			continue
		}
		if timeout == 0 || fired.Load() {
			if armed {
				p.slot.Word.BeginWait(p.pid.gen)
			}
			return nil, ErrTimeout
		}
		if !armed {
			armed = true
			epoch := c.beginWait()
			if timeout != Infinity {
				ref = sys.tm.armWait(sys, p.pid, epoch, int64(timeout), &fired, nil)
				// Cancelled on every way out, a kill's unwinding included,
				// so a dead actor's timeout never holds up Wait.
				defer sys.cancelTimer(ref)
			}
			continue // look again: a message may have arrived before the epoch
		}
		c.waitPark(true)
	}
}

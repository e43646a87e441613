package actor

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/runqueue"
	"github.com/colonyrt/colony/slot"
	"github.com/colonyrt/colony/timers"
)

// Design note: timers.
//
// Problem. send_after, the idle ReceiveTimeout and the timeout of every
// wait need timers that are cheap to arm and cancel (most waits end before
// their timeout), never fire early, and fire close to their deadline even
// when the run queues are long; and there must be no timer goroutine
// (DESIGN.md section 4): the schedulers themselves keep time.
//
// Protocol. One hierarchical timing wheel (package timers) per System,
// guarded by tm.mu, on a monotonic clock that starts at Start. A wheel tick
// is 2^16 ns (about 65.5 us), not 1 ms: the API takes a time.Duration, and
// rounding every deadline up to the next whole millisecond made the average
// timer 0.5 ms late for nothing (docs/benchmarks.md, timers). The wheel does
// not care about the unit. What a timer carries is a message to deliver
// (SendAfter, the idle timeout) or an epoch-stamped wake (the timeout of a
// wait): a timer never touches actor state, it only sends or wakes, and the
// actor decides.
//
// Who fires. Busy schedulers poll: every few loop iterations atomic loads of
// the anything-pending flag (tm.armed) and the earliest-deadline snapshot
// (tm.next); an idle System has one
// timekeeper, parked with that deadline as its timeout (sched.go). Whoever
// polls takes the due timers out of the wheel under tm.mu and pushes their
// messages into the destinations' mailboxes there (lock-free pushes: this
// keeps deadline order across two polls, deliverLocked); the wakes, and the
// timeouts of waits, are performed outside it.
//
// The timer lane. An actor made runnable by an expiry is queued on tm.due,
// a FIFO that every scheduler looks at before its own queues, not at the
// tail of the poller's run queue: behind a long queue (a burst of 100k
// spawns, say) an expiry would wait its turn and be tens of milliseconds
// late, which is what the timers benchmark measured before the lane. The
// lane holds only what has expired, so it cannot grow without the clock
// moving; the fairness turn of the global queue (sched.go) still comes first.
// Whoever pops from the lane and leaves more there wakes one idle role
// (which does the same), so a burst of expiries spreads over the idle roles
// one wake at a time, and a single expiry wakes nobody but the poller. The
// price: a storm of N simultaneous expiries runs before queued work, so that
// work waits N activations (in FIFO order it would have been the other way
// round).
//
// Destination timers. Erlang cancels a send_after timer whose destination
// pid exits, so ReadTimer and CancelTimer then say "not pending" and the
// wheel lets go of the entry at once. The runtime must therefore find a
// dying actor's timers. The first one is recorded in the actor's record
// (proc.tmFirst, 12 bytes); more go to tm.more[pid]; both guarded by tm.mu,
// both allowed to hold fired handles (a fire touches neither: a fired
// handle is simply stale, and the next SendAfter to that actor reuses the
// record's). The finaliser cancels them, but taking tm.mu at every death
// would put a global lock on every exit, so it does so only if flagTimers
// is set in proc.flags. The race with a SendAfter to an actor that is dying
// is a Dekker pair: armTo sets the flag, then reads the exit latch; the
// finaliser takes the latch, then reads the flag. At least one of them sees
// the other, so either armTo drops the timer itself or the finaliser,
// taking tm.mu after armTo, cancels it. (Before, the list lived in the
// actor's cold state: every first SendAfter to an actor allocated 192
// bytes of it, and every fire locked it; at 100k timers that was a fifth
// of the heap and of the fire path. The record's 12 bytes kept it in the
// 176-byte size class; an overflow pointer beside them would not have.)
//
// Precision, and what is left. A busy System fires within a poll interval
// (a few activations) of the deadline. An idle one relies on the
// timekeeper's Go timer, and when the whole process sleeps Go's netpoller
// waits in whole milliseconds (epoll_wait's timeout), waking early and then
// sleeping a further 1 ms: such expiries are 0-1 ms late, 0.5 ms on average.
// Rejected fixes: spinning through the last millisecond burns a core
// whenever timers are dense; a nanosleep for the last stretch is precise but
// cannot be interrupted by a wake permit and is per-OS code; a futex wait
// with a nanosecond timeout, woken by the permit's sender, was built and
// measured (p50 0.65 -> 0.11 ms) and removed: a thread asleep in a syscall
// loses its P to sysmon within 20 us when the other P is busy, and the woken
// timekeeper then queued for a P behind a busy role (up to 3.7 ms), so p99
// got worse (docs/benchmarks.md, timers). The tick
// choice has a cost too: a level-2 slot spans 268 ms, and crossing into it
// used to move all its timers at once under tm.mu (about 27k for 100k
// timers a second: every timer 2-4 ms late, three times a second). The
// wheel now moves them ahead in paced steps (timers.Wheel.Refine): every
// poll calls Refine(refineBudget), which does nothing unless a step is due,
// and each poll folds the time of the next step into tm.next
// (publishLocked), so an idle System's timekeeper wakes for it too. An arm
// lowers tm.next to its own deadline and, if it filled a coarse slot to
// 64 timers, to when Refine can start on that slot: its run-up, or the
// crossing of a coarse slot before it, if later (timers.Wheel.NextRefine,
// a field read; publishArmedLocked): lowered to the deadline only, an idle
// System's timekeeper slept past the run-up of a slot that arms had just
// filled and crossed it in one go, as if there were no Refine (also when
// another coarse slot came first). A
// slot with fewer timers is cheap to cross in one go, and reporting every
// slot an arm occupies would wake the timekeeper on every call that arms
// and cancels the only timer of its slot. Timers armed into a slot already
// being refined, after Refine emptied it, are moved at the next poll or
// sifted at the crossing, as before.

type timerKind uint8

const (
	tkSend     timerKind = iota // deliver msg to `to`
	tkWait                      // set *fired (or fail cell) and Wake(to, epoch)
	tkIdle                      // ReceiveTimeout{seq} to `to`
	tkStart                     // msg (a *timeoutBox): its Timeout to `to` (StartTimer)
	tkName                      // msg (a *namedMsg) to whoever holds its name at expiry
	tkInterval                  // msg (an *intervalTimer): its message to `to`, then armed again
	tkWake                      // (in a fired batch) msg is in to's mailbox: WakeMsg(to)
	tkDone                      // (in a fired batch) nothing left to do
)

type timerEntry struct {
	kind  timerKind
	epoch uint32
	to    Pid
	msg   any
	fired *atomic.Bool
	cell  *replyCell
}

// timerRef names an armed timer inside the runtime. It is the wheel's
// handle alone: a TimerRef returned by value on SendAfter's path costs by
// its size (a 40-byte TimerRef made SendAfter+CancelTimer 20 ns slower
// than a 32-byte one, 5 interleaved rounds), and the destination it also
// held was never read.
type timerRef struct {
	h timers.Handle
}

// TimerRef names a timer started with SendAfter (or StartTimer,
// SendAfterName, SendInterval) of one System. The zero TimerRef names no
// timer, and neither does a ref given to another System than the one that
// made it (CancelTimer and ReadTimer of it there are false). It is a small
// comparable value.
type TimerRef struct {
	r  timerRef
	iv *intervalTimer // a SendInterval's; nil for the others
	// node is the System that made the ref (System.node; 0 in the zero
	// TimerRef). The wheel's handles are numbered per System from the
	// same start, so without it another System's ref matched a timer of
	// this one: CancelTimer cancelled it (TestTimerRefOfAnotherSystemNamesNoTimer).
	node uint32
}

// String formats r as Erlang prints a reference, by the System that made
// it and the timer's number there: #TimerRef<node.n>, where n is its place
// in the order the System armed timers, from 1 (the runtime's own, such as
// call timeouts, count too). The zero TimerRef is #TimerRef<0.0>.
// colonytest's traces write the node as 0, as they do a pid's, so a
// replayed run prints its timer refs alike.
func (r TimerRef) String() string {
	_, seq := r.r.h.Split()
	if r.iv != nil { // a SendInterval's: named by its first expiry
		seq = r.iv.id
	}
	return "#TimerRef<" + strconv.FormatUint(uint64(r.node), 10) + "." + strconv.FormatUint(seq, 10) + ">"
}

type timerState struct {
	mu     sync.Mutex
	wheel  *timers.Wheel[timerEntry] // guarded by mu; time in ticks since start
	firing []timerEntry              // guarded by mu: scratch for poll
	start  time.Time                 // immutable

	// armed mirrors wheel.Len() > 0; written under mu, and only when it
	// changes: an atomic store is a full fence on amd64, and at a million
	// pending timers the fence on every arm waited out the wheel's cache
	// misses (51 ns of a 290 ns SendAfter). The count itself is wheel.Len().
	armed atomic.Bool
	next  atomic.Int64 // min(lower bound on the earliest deadline, time of the next Refine step) (ticks), MaxInt64 if none; written under mu

	// due is the timer lane: pids made runnable by an expiry (the design
	// note). Pushed by pollTimers, popped by any scheduler (popDue).
	due runqueue.Global

	// more holds, per destination (Pid.packed), the SendAfter timers beyond
	// the one in its record; guarded by mu. See "Destination timers".
	more map[uint64]*destTimers

	// closed is set by cancelAll (Shutdown), under mu: from then on arming
	// does nothing.
	closed bool

	// rearm: the interval timers fired by the Advance in progress, to arm
	// again once it is done (the wheel is not armed from inside Advance).
	// Guarded by mu.
	rearm []rearmReq
}

// destTimers is a destination's list of SendAfter timers beyond the one in
// its record (timerState.more). It may hold fired or cancelled handles:
// an append prunes them once the list has grown fourfold since the last
// prune. Pruning looks at every handle's node, a cache miss each in a big
// wheel; at fourfold growth each handle is looked at 4/3 times on average
// (twice at twofold), and the list stays under four times the pending
// count plus eight.
type destTimers struct {
	hs   []timers.Handle
	mark int // len(hs) after the last prune
}

// tickShift: one wheel tick is 1<<tickShift nanoseconds (65.536 us).
const tickShift = 16

func (t *timerState) init() {
	t.start = time.Now()
	t.wheel = timers.New[timerEntry](0)
	t.next.Store(math.MaxInt64)
}

// now returns the runtime clock in nanoseconds since Start.
func (t *timerState) now() int64 { return int64(time.Since(t.start)) }

// nowTick is now in wheel ticks, rounded down.
func (t *timerState) nowTick() int64 { return t.now() >> tickShift }

// tickDeadline converts a delay from now to a wheel deadline, rounding up so
// that nothing fires early, and saturating. A delay of zero or less is due
// now: the wheel fires it at the next poll (Erlang's send_after with 0).
func (t *timerState) tickDeadline(d int64) int64 {
	now := t.now()
	if d <= 0 {
		return now >> tickShift
	}
	return ceilTick(satAdd(now, d))
}

// tickTime is the runtime clock (ns since Start) at the start of tick dl,
// saturating.
func tickTime(dl int64) int64 {
	if dl >= math.MaxInt64>>tickShift {
		return math.MaxInt64
	}
	return dl << tickShift
}

// refineBudget is how many timers one poll moves ahead of a coarse slot's
// start (timers.Wheel.Refine): about 25 us under mu.
const refineBudget = 256

// syncArmedLocked updates armed. Called with mu held.
func (t *timerState) syncArmedLocked() {
	if a := t.wheel.Len() > 0; a != t.armed.Load() {
		t.armed.Store(a)
		if !a {
			// Or the next arm, comparing its deadline with a stale next,
			// skips timerArmed; with nothing pending no role is timekeeper,
			// so nobody would wake for it (TestTimerAfterCancelOfTheLastOne).
			t.next.Store(math.MaxInt64)
		}
	}
}

// publishArmedLocked is publishLocked after an Arm with deadline dl: armed
// set, and next lowered to dl, or to when Refine can start on a coarse
// slot that arms have filled (wheel.NextRefine), if that is earlier; it
// returns that value. Any value at or before the earliest deadline is a
// valid next (pollers only need never to look too late), and dl is one;
// the exact one costs a walk of the wheel's bitmaps that, at a million
// pending timers, missed the cache on every arm (57 ns). A poller that
// finds next early recomputes it (pollTimers). NextRefine is a field
// read: it brings pollers round for a run-up that Refine's answer, folded
// into next at the last poll, did not know of (or that syncArmedLocked
// dropped with it, when the last timer went).
func (t *timerState) publishArmedLocked(dl int64) int64 {
	t.syncArmedLocked()
	dl = min(dl, t.wheel.NextRefine())
	if dl < t.next.Load() {
		t.next.Store(dl)
	}
	return dl
}

// publishLocked refreshes the atomic mirrors. Called with mu held. next is
// also when the wheel wants Refine called (Refine(0) only says when; it
// moves nothing), so pollers come round to refine a coarse slot in steps
// before its start instead of in one stall at it.
func (t *timerState) publishLocked() {
	t.syncArmedLocked()
	n, ok := t.wheel.NextExpiry()
	if !ok {
		n = math.MaxInt64
	}
	t.next.Store(min(n, t.wheel.Refine(0)))
}

// pending is the number of pending timers.
func (t *timerState) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wheel.Len()
}

// arm adds a timer d nanoseconds from now.
func (t *timerState) arm(sys *System, d int64, e timerEntry) timerRef {
	dl := t.tickDeadline(d)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return timerRef{} // after Shutdown: nothing would ever fire it
	}
	old := t.next.Load()
	h := t.wheel.Arm(dl, e)
	at := t.publishArmedLocked(dl)
	t.mu.Unlock()
	if at < old {
		sys.timerArmed(at)
	}
	return timerRef{h: h}
}

// armWait arms the timeout of a wait: on expiry, fired is set (or cell
// failed with ErrTimeout) and (pid, epoch) is woken.
func (t *timerState) armWait(sys *System, pid Pid, epoch uint32, d int64, fired *atomic.Bool, cell *replyCell) timerRef {
	if cell != nil && sys.cfg.det != nil {
		sys.detCallTimeout(pid, cell) // a fault may time it out (det.go)
	}
	return t.arm(sys, d, timerEntry{kind: tkWait, to: pid, epoch: epoch, fired: fired, cell: cell})
}

// cancelHandle cancels a timer; reports whether it was pending.
func (t *timerState) cancelHandle(sys *System, h timers.Handle) bool {
	if h == (timers.Handle{}) {
		return false
	}
	t.mu.Lock()
	ok := t.wheel.Cancel(h)
	if ok {
		t.syncArmedLocked() // next may stay early (publishArmedLocked)
	}
	t.mu.Unlock()
	if ok && !t.armed.Load() {
		sys.checkIdle()
	}
	return ok
}

// cancelAll drops every pending timer (Shutdown). Every handle issued so
// far stays stale (Clear keeps the sequence), including those kept in
// proc.tmFirst and in TimerRefs.
func (t *timerState) cancelAll(sys *System) {
	t.mu.Lock()
	t.closed = true // a SendAfter or wait armed from now on arms nothing (SendAfter: ErrStopped)
	t.wheel.Clear()
	t.more = nil
	t.publishLocked()
	t.mu.Unlock()
}

func (sys *System) cancelTimer(r timerRef) bool { return sys.tm.cancelHandle(sys, r.h) }

// timerDue reports whether a timer may be due now, or expired timers wait
// in the lane. A role about to park re-checks it after publishing its idle
// bit (sched.go, idle).
func (sys *System) timerDue() bool {
	t := &sys.tm
	return t.due.Len() > 0 || (t.armed.Load() && t.nowTick() >= t.next.Load())
}

// untilTick is how long the timekeeper may sleep to wake at wheel tick n.
func (sys *System) untilTick(n int64) time.Duration {
	if n == math.MaxInt64 {
		return time.Hour
	}
	return time.Duration(tickTime(n) - sys.tm.now())
}

// pollTimers fires due timers. Any role holder may call it; if another is
// already firing, it returns at once. What fires is queued on the timer
// lane, which w's role looks at first when it returns to its loop: an expiry
// seen by the timekeeper is run by the timekeeper, with no other wake-up
// unless more than one actor is waiting there (popDue).
func (sys *System) pollTimers(w *worker) {
	t := &sys.tm
	now := t.nowTick()
	if now < t.next.Load() || !t.mu.TryLock() {
		return
	}
	t.wheel.Advance(now, func(e timerEntry) {
		sys.deliverLocked(w, &e)
		t.firing = append(t.firing, e)
	})
	t.rearmLocked()
	t.wheel.Refine(refineBudget)
	batch := t.firing
	t.firing = nil
	t.publishLocked()
	t.mu.Unlock()
	if h := testHookFiring.Load(); h != nil && len(batch) > 0 {
		(*h)()
	}
	var lane [64]uint64
	n := 0
	for i := range batch {
		if sys.fire(w, &batch[i]) {
			if n == len(lane) {
				t.due.PushBatch(lane[:n])
				n = 0
			}
			if raceEnabled {
				sys.assertQueued(batch[i].to)
			}
			lane[n] = batch[i].to.packed()
			n++
		}
		batch[i] = timerEntry{}
	}
	if n > 0 {
		t.due.PushBatch(lane[:n])
	}
	t.mu.Lock()
	if t.firing == nil {
		t.firing = batch[:0]
	}
	t.mu.Unlock()
	if !t.armed.Load() {
		sys.checkIdle()
	}
}

// testHookFiring, if set, runs in pollTimers between taking a non-empty
// batch from the wheel (its messages pushed) and waking its destinations
// (tests hold a poller there).
var testHookFiring atomic.Pointer[func()]

// popDue takes the next actor from the timer lane. If more are left it wakes
// an idle role to help, so a burst of expiries spreads one wake at a time.
// The wake is for speed only: the caller comes back to the lane itself, and
// a role re-checks the lane (timerDue) after publishing its idle bit, so
// nothing is left behind.
func (sys *System) popDue() (uint64, bool) {
	t := &sys.tm
	v, ok := t.due.Pop()
	if ok && t.due.Len() > 0 {
		sys.wakeIdle()
	}
	return v, ok
}

// deliverLocked puts an expired timer's message in its destination's
// mailbox, under the wheel's lock, from inside Advance, and turns e into
// what is left to do outside the lock: tkWake (make the destination
// runnable) or tkDone. Pushing under the lock keeps the deadline order
// Advance gives across polls: two roles polling at once each fire a batch
// outside the lock, and had the pushes been made there too, an actor could
// get a later tick's message before an earlier tick's (seen with a poller
// held between its Advance and its pushes:
// TestTimerExpiriesOfTwoTicksKeepDeadlineOrder). Serialising whole batches
// instead (a lock held to the last wake) kept order too, but a holder
// descheduled in a spawn burst stalled every expiry behind it: p99
// lateness of 100k timers went from 1.4 ms to 2-5 ms. A push is lock-free
// and takes no other lock.
func (sys *System) deliverLocked(w *worker, e *timerEntry) {
	switch e.kind {
	case tkSend:
		p, err := sys.lookup(e.to)
		if err != nil {
			sys.dropped.Add(1) // the destination died: its mailbox is gone
			e.kind = tkDone
			return
		}
		// As sys.send, but the wake is ours to queue.
		if err := p.mbox.Send(e.msg, wcache(w)); err != nil {
			if err == mailbox.ErrClosed {
				sys.dropped.Add(1)
			}
			e.kind = tkDone // a full bounded mailbox refuses a timer's message as it would a Send
			return
		}
		e.kind, e.msg = tkWake, nil
	case tkStart:
		// StartTimer's: the Timeout, its Ref written at the arm.
		e.kind, e.msg = tkSend, e.msg.(*timeoutBox).t
		sys.deliverLocked(w, e)
	case tkInterval:
		iv := e.msg.(*intervalTimer)
		p, err := sys.lookup(e.to)
		if err != nil || iv.done {
			iv.done = true // the destination died: the interval ends with it
			e.kind = tkDone
			return
		}
		t := &sys.tm
		t.rearm = append(t.rearm, rearmReq{iv, p})
		e.kind, e.msg = tkSend, iv.msg
		sys.deliverLocked(w, e)
	case tkName:
		// Resolved now, as send_after to an atom: no holder, no message
		// (counted dropped, as a send to a dead pid).
		nm := e.msg.(*namedMsg)
		pid, ok := sys.nm.reg.Whereis(nm.name)
		if !ok {
			sys.dropped.Add(1)
			e.kind = tkDone
			return
		}
		e.kind, e.to, e.msg = tkSend, pid, nm.msg
		sys.deliverLocked(w, e)
	case tkIdle:
		p, err := sys.lookup(e.to)
		if err != nil {
			e.kind = tkDone
			return
		}
		// As sys.deliver: a signal-as-message no bound refuses.
		if p.mbox.Deliver(e.msg, nil) != nil {
			sys.dropped.Add(1)
			e.kind = tkDone
			return
		}
		e.kind, e.msg = tkWake, nil
	}
}

// fire performs what is left of one expired timer after deliverLocked,
// outside the wheel's lock. It reports whether it made e.to runnable: the
// caller must then queue it on the lane.
func (sys *System) fire(w *worker, e *timerEntry) bool {
	switch e.kind {
	case tkDone:
		return false
	case tkWake:
		// A stale gen (the destination died since the push) makes WakeMsg
		// a no-op.
		p := sys.procOf(e.to)
		return p != nil && p.slot.Word.WakeMsg(e.to.gen) == slot.Enqueue
	case tkWait:
		if e.cell != nil {
			e.cell.complete(sys, w, nil, ErrTimeout)
			return false
		}
		e.fired.Store(true)
		// A stale (gen, epoch) — the wait ended, or the actor died — makes
		// Wake a no-op.
		p := sys.procOf(e.to)
		return p != nil && p.slot.Word.Wake(e.to.gen, e.epoch) == slot.Enqueue
	}
	panic("actor: broken invariant: timer of unknown kind " + itoa(uint32(e.kind)))
}

// armIdleTimeout arms the ReceiveTimeout of an actor about to park idle.
// Owner only.
func (sys *System) armIdleTimeout(p *proc, e *procExt) {
	if e.idleTimer != (timerRef{}) {
		return // already armed for this idle period
	}
	e.idleTimer = sys.tm.arm(sys, e.recvTimeout, timerEntry{kind: tkIdle, to: p.pid, msg: ReceiveTimeout{seq: e.idleSeq}})
}

// SendAfter sends msg to pid after d (erlang:send_after/3). A zero d sends
// at the next timer poll. If pid dies first the timer is cancelled, as
// Erlang does for a pid destination. Errors: ErrBadPid; ErrNegativeTimeout
// for a negative d, as send_after's badarg and as every other timeout here
// (it used to send at once, which hid a deadline computed in the past:
// clamp with max(d, 0) to mean "now"); ErrStopped once Shutdown has
// killed what it could not stop (timers work through its ordered stop, for
// the actors still running).
func (sys *System) SendAfter(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	return sys.sendAfter(pid, tkSend, msg, d)
}

// sendAfter arms a timer of kind tkSend, tkStart or tkInterval to pid.
func (sys *System) sendAfter(pid Pid, kind timerKind, msg any, d time.Duration) (TimerRef, error) {
	if d < 0 {
		return TimerRef{}, ErrNegativeTimeout
	}
	if sys.halt.Load() {
		return TimerRef{}, ErrStopped
	}
	p, err := sys.lookup(pid)
	if err == ErrBadPid {
		return TimerRef{}, err
	}
	if err != nil {
		sys.dropped.Add(1)
		return TimerRef{}, nil // the destination is dead: the timer is cancelled at once
	}
	return sys.tm.armTo(sys, p, int64(d), kind, msg)
}

// armTo arms a SendAfter timer to p and records it as destined there, so
// that p's death cancels it. Not on p after its death: the timer is
// dropped then, as if cancelled by that death.
func (t *timerState) armTo(sys *System, p *proc, d int64, kind timerKind, msg any) (TimerRef, error) {
	var dl int64
	if kind == tkInterval {
		iv := msg.(*intervalTimer)
		iv.next = satAdd(t.now(), d) // the first expiry; each next one is period later
		dl = ceilTick(iv.next)
	} else {
		dl = t.tickDeadline(d)
	}
	t.mu.Lock()
	// Dekker with finalise: publish the flag, then look at the latch. If
	// the latch is still alive, the finaliser (which takes the latch, then
	// reads the flag) will take mu after us and cancel what we record.
	if !p.flags.has(flagTimers) {
		p.flags.set(flagTimers, true)
	}
	if t.closed { // Shutdown's end: nothing would ever fire it
		t.mu.Unlock()
		return TimerRef{}, ErrStopped
	}
	if p.exit.Load() != alive {
		t.mu.Unlock()
		sys.dropped.Add(1)
		return TimerRef{}, nil
	}
	old := t.next.Load()
	h := t.wheel.Arm(dl, timerEntry{kind: kind, to: p.pid, msg: msg})
	t.recordDestLocked(p, h)
	ref := TimerRef{r: timerRef{h: h}, node: sys.node}
	switch kind {
	case tkStart:
		msg.(*timeoutBox).t.Ref = ref // under mu, before Advance (under mu too) can fire it
	case tkInterval:
		iv := msg.(*intervalTimer)
		iv.h = h // under mu, as every later expiry's
		_, iv.id = h.Split()
		ref = TimerRef{iv: iv, node: sys.node}
	}
	at := t.publishArmedLocked(dl)
	t.mu.Unlock()
	if at < old {
		sys.timerArmed(at)
	}
	return ref, nil
}

// recordDestLocked records h, a timer destined to p, so that p's death
// cancels it (cancelDest): in p's record if that holds no pending timer,
// else in p's list. mu held.
func (t *timerState) recordDestLocked(p *proc, h timers.Handle) {
	if _, pending := t.wheel.Deadline(p.tmFirst()); !pending {
		p.setTmFirst(h)
		return
	}
	k := p.pid.packed()
	l := t.more[k]
	if l == nil {
		if t.more == nil {
			t.more = make(map[uint64]*destTimers)
		}
		l = &destTimers{}
		t.more[k] = l
	}
	l.add(t.wheel, h)
}

// add records h, pruning the list first if it has grown fourfold. tm.mu
// held.
func (l *destTimers) add(w *timers.Wheel[timerEntry], h timers.Handle) {
	if len(l.hs) >= 4*l.mark+8 {
		live := l.hs[:0]
		for _, x := range l.hs {
			if _, ok := w.Deadline(x); ok {
				live = append(live, x)
			}
		}
		clear(l.hs[len(live):])
		l.hs, l.mark = live, len(live)
	}
	l.hs = append(l.hs, h)
}

// cancelDest cancels the SendAfter timers destined to p, which is dying.
func (t *timerState) cancelDest(sys *System, p *proc) {
	t.mu.Lock()
	n := 0
	if t.wheel.Cancel(p.tmFirst()) {
		n++
	}
	p.setTmFirst(timers.Handle{})
	if l := t.more[p.pid.packed()]; l != nil {
		for _, h := range l.hs {
			if t.wheel.Cancel(h) {
				n++
			}
		}
		delete(t.more, p.pid.packed())
	}
	if n > 0 {
		t.syncArmedLocked() // next may stay early (publishArmedLocked)
	}
	t.mu.Unlock()
	if n > 0 && !t.armed.Load() {
		sys.checkIdle()
	}
}

// CancelTimer cancels a SendAfter timer (erlang:cancel_timer/1). It reports
// whether the timer was still pending; cancelling twice, a fired timer,
// the zero TimerRef or another System's ref is a clean false. It does not return the time left
// (cancel_timer/2's {info, false}): that costs a clock read on the path
// every unneeded timeout takes. For cancel_timer/1's answer, ReadTimer
// first: when CancelTimer then reports true, the time read was left (at
// most the gap between the two calls early); when it reports false, the
// timer fired in between.
func (sys *System) CancelTimer(ref TimerRef) bool {
	if ref.node != sys.node {
		return false // the zero TimerRef, or another System's
	}
	if ref.iv != nil {
		return sys.tm.cancelInterval(sys, ref.iv)
	}
	return sys.cancelTimer(ref.r)
}

// ReadTimer returns the time left on a SendAfter timer
// (erlang:read_timer/1), and false if it is no longer pending (or ref is
// another System's).
func (sys *System) ReadTimer(ref TimerRef) (time.Duration, bool) {
	if ref.node != sys.node || ref.r.h == (timers.Handle{}) && ref.iv == nil {
		return 0, false
	}
	sys.tm.mu.Lock()
	h := ref.r.h
	if ref.iv != nil {
		h = ref.iv.h // the pending expiry: re-armed at each one
	}
	dl, ok := sys.tm.wheel.Deadline(h)
	sys.tm.mu.Unlock()
	if !ok {
		return 0, false
	}
	// The wheel holds the deadline rounded up to a tick (tickDeadline), so
	// the deadline asked for lies in the tick's last 2^16 ns: measure to the
	// earliest of them, never past it. Read at once, a timer shows no more
	// than its delay, as read_timer's does (it showed up to a tick more;
	// found by the Erlang differential test timers/cancel_pending).
	left := time.Duration(lowestDeadline(dl) - sys.tm.now())
	return max(left, 0), true
}

// lowestDeadline is the earliest runtime-clock deadline that tickDeadline
// rounds up to tick dl. The saturated tick (math.MaxInt64>>tickShift) is no
// exception: the deadlines tickDeadline saturates lie above that tick's
// earliest one too, so reading it as math.MaxInt64 showed up to a tick
// more than the delay; (dl-1)<<tickShift cannot overflow.
func lowestDeadline(dl int64) int64 {
	if dl > math.MaxInt64>>tickShift || dl <= 0 {
		return tickTime(dl)
	}
	return tickTime(dl-1) + 1
}

// Timeout is the message StartTimer delivers: erlang:start_timer/3's
// {timeout, TimerRef, Msg}. Ref is the timer's own reference, so a
// receiver can tell the timer it armed last from one it cancelled too late
// (its message was already queued) without a sequence number of its own.
type Timeout struct {
	Ref TimerRef
	Msg any
}

// timeoutBox carries a StartTimer's Timeout through the wheel: armTo writes
// the Ref once the wheel has given it, and the expiry delivers the Timeout.
type timeoutBox struct{ t Timeout }

// StartTimer is SendAfter with the timer's reference in the message
// (erlang:start_timer/3): after d, pid gets Timeout{Ref, msg}, where Ref is
// what StartTimer returned. Errors, cancellation and ReadTimer as
// SendAfter's.
func (sys *System) StartTimer(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	return sys.sendAfter(pid, tkStart, &timeoutBox{t: Timeout{Msg: msg}}, d)
}

// namedMsg is a SendAfterName timer's payload.
type namedMsg struct {
	name string
	msg  any
}

// SendAfterName sends msg after d to the actor registered under name at
// that moment (erlang:send_after/3 to an atom): the name is looked up when
// the timer fires, so the message reaches a server restarted under the
// name meanwhile, and nobody if the name is free then (no error; counted
// in Stats.Dropped). The timer is not tied to any actor's life: only
// CancelTimer or Shutdown stops it. Errors: ErrBadName for "",
// ErrNegativeTimeout, ErrStopped.
func (sys *System) SendAfterName(name string, msg any, d time.Duration) (TimerRef, error) {
	if name == "" {
		return TimerRef{}, ErrBadName
	}
	if d < 0 {
		return TimerRef{}, ErrNegativeTimeout
	}
	if sys.halt.Load() {
		return TimerRef{}, ErrStopped
	}
	r := sys.tm.arm(sys, int64(d), timerEntry{kind: tkName, msg: &namedMsg{name, msg}})
	if r == (timerRef{}) {
		return TimerRef{}, ErrStopped // Shutdown's end: nothing would ever fire it
	}
	return TimerRef{r: r, node: sys.node}, nil
}

// SendAfterName sends msg after d to whoever holds name then; see
// System.SendAfterName.
func (c *Context) SendAfterName(name string, msg any, d time.Duration) (TimerRef, error) {
	c.proc()
	if c.orphan() {
		return TimerRef{}, ErrNoProc
	}
	return c.w.sys.SendAfterName(name, msg, d)
}

// StartTimer is SendAfter with the timer's reference in the message; see
// System.StartTimer.
func (c *Context) StartTimer(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	c.proc()
	if c.orphan() {
		return TimerRef{}, ErrNoProc
	}
	return c.w.sys.StartTimer(pid, msg, d)
}

// SendAfter sends msg to pid after d; see System.SendAfter.
func (c *Context) SendAfter(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	c.proc()
	if c.orphan() {
		return TimerRef{}, ErrNoProc
	}
	return c.w.sys.sendAfter(pid, tkSend, msg, d)
}

// CancelTimer cancels a SendAfter timer; see System.CancelTimer.
func (c *Context) CancelTimer(ref TimerRef) bool { return c.w.sys.CancelTimer(ref) }

// ReadTimer returns the time left on a timer; see System.ReadTimer.
func (c *Context) ReadTimer(ref TimerRef) (time.Duration, bool) { return c.w.sys.ReadTimer(ref) }

// ErrBadInterval: SendInterval was given an interval that is not positive.
var ErrBadInterval = errors.New("actor: SendInterval needs a positive interval")

// intervalTimer is a SendInterval's state, guarded by timerState.mu. Its
// pending expiry is h, deadline next (runtime clock); each expiry delivers
// msg and arms the next at next+period, so the interval does not drift with
// how late each expiry is handled. done: cancelled, or its destination
// died; never armed again.
type intervalTimer struct {
	to     Pid
	msg    any
	period int64
	next   int64
	h      timers.Handle
	done   bool
	// id is the first expiry's number on the wheel (its Handle's seq),
	// which TimerRef.String prints. Written once under mu before armTo
	// returns the ref; read unlocked by whoever got the ref, after that.
	id uint64
}

// rearmReq is an interval timer fired by Advance, with its destination.
type rearmReq struct {
	iv *intervalTimer
	p  *proc
}

// rearmLocked arms again the interval timers the last Advance fired, and
// records each new expiry as destined to its actor, as armTo does, so that
// the actor's death cancels it: the destination was alive at the expiry
// (deliverLocked looked), and its finaliser, which sets the exit latch
// before it takes mu to cancel its timers, then finds this one. mu held.
func (t *timerState) rearmLocked() {
	for i, r := range t.rearm {
		t.rearm[i] = rearmReq{}
		if r.iv.done {
			continue
		}
		r.iv.next = satAdd(r.iv.next, r.iv.period)
		r.iv.h = t.wheel.Arm(ceilTick(r.iv.next), timerEntry{kind: tkInterval, to: r.iv.to, msg: r.iv})
		t.recordDestLocked(r.p, r.iv.h)
	}
	t.rearm = t.rearm[:0]
}

// satAdd is a+b for b > 0, saturating at math.MaxInt64: an interval of
// Infinity, or one whose next expiry lies past the clock's range, must
// never fire, as tickDeadline makes such a SendAfter; wrapped, its
// deadline was in the past, and it fired at every poll.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// ceilTick is the wheel tick of a runtime-clock deadline, rounded up so
// that nothing fires early, saturating.
func ceilTick(ns int64) int64 {
	const tick = 1 << tickShift
	if ns > math.MaxInt64-tick {
		return math.MaxInt64 >> tickShift
	}
	return (ns + tick - 1) >> tickShift
}

// cancelInterval ends an interval timer; it reports whether it was running.
func (t *timerState) cancelInterval(sys *System, iv *intervalTimer) bool {
	t.mu.Lock()
	iv.done = true
	ok := t.wheel.Cancel(iv.h) // pending whenever it runs: fired and re-armed under mu
	if ok {
		t.syncArmedLocked()
	}
	t.mu.Unlock()
	if ok && !t.armed.Load() {
		sys.checkIdle()
	}
	return ok
}

// SendInterval sends msg to pid every d, the first time after d
// (timer:send_interval/3), until CancelTimer(ref) or pid's death, which
// ends it as it cancels pid's SendAfter timers. Expiries do not drift: the
// n-th is due n*d after the call, however late the ones before it were
// handled (the wheel's resolution is 65.5 us). ReadTimer gives the time to
// the next expiry; CancelTimer reports whether the interval was still
// running. A bounded mailbox that is full refuses one expiry's message, as
// it would a Send, and the interval goes on. An interval shorter than the
// wheel's tick (WheelTick) cannot keep up: it delivers at most once per
// poll of the wheel and falls ever further behind. Errors as SendAfter's, and
// ErrBadInterval for d <= 0. A dead pid gives the zero TimerRef and no
// error, as SendAfter.
func (sys *System) SendInterval(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	if d <= 0 {
		return TimerRef{}, ErrBadInterval
	}
	return sys.sendAfter(pid, tkInterval, &intervalTimer{to: pid, msg: msg, period: int64(d)}, d)
}

// SendInterval sends msg to pid every d; see System.SendInterval.
func (c *Context) SendInterval(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	c.proc()
	if c.orphan() {
		return TimerRef{}, ErrNoProc
	}
	return c.w.sys.SendInterval(pid, msg, d)
}

package actor

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/slot"
	"github.com/colonyrt/colony/timers"
)

// Timers. One hierarchical timing wheel (package timers) per System, guarded
// by tm.mu, with 1 ms resolution on a monotonic clock that starts at Start.
// No goroutine drives it: schedulers do (the timekeeper role, sched.go).
// What a timer carries is a message to deliver (SendAfter, the idle
// timeout) or an epoch-stamped wake (the timeout of a wait): a timer never
// touches actor state, it only sends or wakes, and the actor decides.

type timerKind uint8

const (
	tkSend timerKind = iota // deliver msg to `to`
	tkWait                  // set *fired (or fail cell) and Wake(to, epoch)
	tkIdle                  // ReceiveTimeout{seq} to `to`
)

type timerEntry struct {
	kind  timerKind
	epoch uint32
	to    Pid
	msg   any
	fired *atomic.Bool
	cell  *replyCell
}

// timerRef names an armed timer inside the runtime.
type timerRef struct {
	h  timers.Handle
	to Pid
}

// TimerRef names a timer started with SendAfter. The zero TimerRef names no
// timer. It is a small comparable value.
type TimerRef struct{ r timerRef }

type timerState struct {
	mu     sync.Mutex
	wheel  *timers.Wheel[timerEntry] // guarded by mu
	firing []timerEntry              // guarded by mu: scratch for poll
	start  time.Time                 // immutable

	count atomic.Int64 // pending timers; mirror of wheel.Len(), written under mu
	next  atomic.Int64 // lower bound on the earliest deadline (ms), MaxInt64 if none; written under mu
}

func (t *timerState) init() {
	t.start = time.Now()
	t.wheel = timers.New[timerEntry](0)
	t.next.Store(math.MaxInt64)
}

// now returns the runtime clock in nanoseconds since Start.
func (t *timerState) now() int64 { return int64(time.Since(t.start)) }

// msDeadline converts a delay from now to a wheel deadline, rounding up so
// that nothing fires early, and saturating.
func (t *timerState) msDeadline(d int64) int64 {
	if d < 0 {
		d = 0
	}
	now := t.now()
	if d > math.MaxInt64-now-int64(time.Millisecond) {
		return math.MaxInt64 / int64(time.Millisecond)
	}
	return (now + d + int64(time.Millisecond) - 1) / int64(time.Millisecond)
}

// publishLocked refreshes the atomic mirrors. Called with mu held.
func (t *timerState) publishLocked() {
	t.count.Store(int64(t.wheel.Len()))
	if n, ok := t.wheel.NextExpiry(); ok {
		t.next.Store(n)
	} else {
		t.next.Store(math.MaxInt64)
	}
}

// arm adds a timer d nanoseconds from now.
func (t *timerState) arm(sys *System, d int64, e timerEntry) timerRef {
	dl := t.msDeadline(d)
	t.mu.Lock()
	old := t.next.Load()
	h := t.wheel.Arm(dl, e)
	t.publishLocked()
	t.mu.Unlock()
	if dl < old {
		sys.wakeTimekeeper() // an earlier deadline: the timekeeper must re-plan
	}
	return timerRef{h: h, to: e.to}
}

// armWait arms the timeout of a wait: on expiry, fired is set (or cell
// failed with ErrTimeout) and (pid, epoch) is woken.
func (t *timerState) armWait(sys *System, pid Pid, epoch uint32, d int64, fired *atomic.Bool, cell *replyCell) timerRef {
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
		t.publishLocked()
	}
	t.mu.Unlock()
	if ok && t.count.Load() == 0 {
		sys.checkIdle()
	}
	return ok
}

// cancelAll drops every pending timer (Shutdown).
func (t *timerState) cancelAll(sys *System) {
	t.mu.Lock()
	t.wheel = timers.New[timerEntry](t.wheel.Now())
	t.publishLocked()
	t.mu.Unlock()
}

func (sys *System) cancelTimer(r timerRef) bool { return sys.tm.cancelHandle(sys, r.h) }

// timerDue reports whether a timer may be due now.
func (sys *System) timerDue() bool {
	return sys.tm.count.Load() > 0 && sys.tm.now()/int64(time.Millisecond) >= sys.tm.next.Load()
}

// untilNextTimer is how long the timekeeper may sleep.
func (sys *System) untilNextTimer() time.Duration {
	n := sys.tm.next.Load()
	if n == math.MaxInt64 {
		return time.Hour
	}
	return time.Duration(n)*time.Millisecond - time.Duration(sys.tm.now())
}

// pollTimers fires due timers. Any role holder may call it; if another is
// already firing, it returns at once. What fires is queued on w's role (the
// first in runnext, with no wake-up), so an expiry seen by the timekeeper
// is run by the timekeeper: one scheduler wakes, not a herd.
func (sys *System) pollTimers(w *worker) {
	t := &sys.tm
	nowMs := t.now() / int64(time.Millisecond)
	if nowMs < t.next.Load() || !t.mu.TryLock() {
		return
	}
	t.wheel.Advance(nowMs, func(e timerEntry) { t.firing = append(t.firing, e) })
	batch := t.firing
	t.firing = nil
	t.publishLocked()
	t.mu.Unlock()
	for i := range batch {
		sys.fire(w, &batch[i])
		batch[i] = timerEntry{}
	}
	t.mu.Lock()
	if t.firing == nil {
		t.firing = batch[:0]
	}
	t.mu.Unlock()
	if t.count.Load() == 0 {
		sys.checkIdle()
	}
}

// fire performs one expired timer, outside the wheel's lock.
func (sys *System) fire(w *worker, e *timerEntry) {
	switch e.kind {
	case tkSend:
		if p := sys.procOf(e.to); p != nil {
			if cs := p.cold.Load(); cs != nil {
				cs.forgetTimerTo()
			}
		}
		sys.send(w, e.to, e.msg)
	case tkIdle:
		if p, err := sys.lookup(e.to); err == nil {
			sys.deliver(w, p, e.msg)
		}
	case tkWait:
		if e.cell != nil {
			e.cell.complete(sys, w, nil, ErrTimeout)
			return
		}
		e.fired.Store(true)
		if p := sys.procOf(e.to); p != nil && p.slot.Word.Wake(e.to.gen, e.epoch) == slot.Enqueue {
			sys.ready(w, e.to, true)
		}
	}
}

// forgetTimerTo drops fired handles from the destination's list: the list
// holds only pending timers, so it is pruned when one fires.
func (cs *coldState) forgetTimerTo() {
	cs.mu.Lock()
	cs.pruneTimers = true
	cs.mu.Unlock()
}

// armIdleTimeout arms the ReceiveTimeout of an actor about to park idle.
// Owner only.
func (sys *System) armIdleTimeout(p *proc, e *procExt) {
	if e.idleTimer != (timerRef{}) {
		return // already armed for this idle period
	}
	e.idleTimer = sys.tm.arm(sys, e.recvTimeout, timerEntry{kind: tkIdle, to: p.pid, msg: ReceiveTimeout{seq: e.idleSeq}})
}

// SendAfter sends msg to pid after d (erlang:send_after/3). A negative or
// zero d sends at the next timer poll. If pid dies first the timer is
// cancelled, as Erlang does for a pid destination. Errors: ErrBadPid.
func (sys *System) SendAfter(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	return sys.sendAfter(pid, msg, d)
}

func (sys *System) sendAfter(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	if sys.halt.Load() || sys.stopping.Load() {
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
	r := sys.tm.arm(sys, int64(d), timerEntry{kind: tkSend, to: pid, msg: msg})
	cs := p.coldNode()
	cs.mu.Lock()
	if cs.dead {
		cs.mu.Unlock()
		sys.cancelTimer(r)
		return TimerRef{}, nil
	}
	if cs.pruneTimers {
		cs.pruneTimers = false
		live := cs.timers[:0]
		sys.tm.mu.Lock()
		for _, h := range cs.timers {
			if _, ok := sys.tm.wheel.Deadline(h); ok {
				live = append(live, h)
			}
		}
		sys.tm.mu.Unlock()
		clear(cs.timers[len(live):])
		cs.timers = live
	}
	cs.timers = append(cs.timers, r.h)
	cs.mu.Unlock()
	return TimerRef{r}, nil
}

// CancelTimer cancels a SendAfter timer (erlang:cancel_timer/1). It reports
// whether the timer was still pending; cancelling twice, a fired timer or
// the zero TimerRef is a clean false.
func (sys *System) CancelTimer(ref TimerRef) bool { return sys.cancelTimer(ref.r) }

// ReadTimer returns the time left on a SendAfter timer
// (erlang:read_timer/1), and false if it is no longer pending.
func (sys *System) ReadTimer(ref TimerRef) (time.Duration, bool) {
	if ref.r.h == (timers.Handle{}) {
		return 0, false
	}
	sys.tm.mu.Lock()
	dl, ok := sys.tm.wheel.Deadline(ref.r.h)
	sys.tm.mu.Unlock()
	if !ok {
		return 0, false
	}
	left := time.Duration(dl)*time.Millisecond - time.Duration(sys.tm.now())
	return max(left, 0), true
}

// SendAfter sends msg to pid after d; see System.SendAfter.
func (c *Context) SendAfter(pid Pid, msg any, d time.Duration) (TimerRef, error) {
	c.proc()
	if c.orphan() {
		return TimerRef{}, ErrNoProc
	}
	return c.w.sys.sendAfter(pid, msg, d)
}

// CancelTimer cancels a SendAfter timer; see System.CancelTimer.
func (c *Context) CancelTimer(ref TimerRef) bool { return c.w.sys.CancelTimer(ref) }

// ReadTimer returns the time left on a timer; see System.ReadTimer.
func (c *Context) ReadTimer(ref TimerRef) (time.Duration, bool) { return c.w.sys.ReadTimer(ref) }

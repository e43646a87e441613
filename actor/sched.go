// Design note: schedulers, workers and the hand-off.
//
// Problem. Go gives us no user-level stack switching, so an idle actor is
// a record in a slot, not a goroutine (it costs no stack). A fixed number N
// of scheduler roles run actors; but a handler may block (a call, a selective
// receive, a sleep), and a blocked handler holds a goroutine stack that we
// cannot park and switch away from the way Erlang's BEAM does.
//
// Rejected. A goroutine per actor: 2 KiB+ per idle actor, and Go's scheduler
// (not ours) decides who runs. Forbidding blocking in handlers (what other Go
// actor frameworks do): straight-line request/response code deadlocks or has
// to be turned inside out.
//
// Protocol. A role (type sched, one per index 0..N-1) is the right to run
// actors: its runnext slot, its local run queue, its parker and its stats.
// A worker is a goroutine; it holds at most one role at a time and runs the
// scheduler loop while it holds one. When a handler blocks, its worker
// publishes the wait in the slot word (Parked/Blocked), hands its role to a
// spare worker (which carries on scheduling), and waits on its own resume
// channel holding nothing but the actor's stack. When the wait is satisfied
// the actor is queued like any other; the scheduler that pops it sees the
// parked goroutine (proc.g), hands that goroutine its role, and becomes a
// spare itself. So at most N handlers run at once, every role keeps running,
// and an actor costs a goroutine only while it is blocked. Roles travel
// between goroutines; goroutines never hold two.
//
// Idle roles park on a per-role permit channel (cap 1): in our measurements
// (docs/benchmarks.md) the runtime's channel wake beat a raw futex and any
// OS-thread locking. An idle mask (one bit per role) lets an enqueue wake
// exactly one idle role, or pay one load when none is idle. Publishing
// idleness is Dekker-style against enqueuers: a role sets its bit and then
// re-checks the queues; an enqueuer pushes and then loads the mask. Whoever
// clears a role's bit by CAS owes it exactly one permit; a role that clears
// its own bit owes nothing, and one that fails to clear it must consume the
// permit that is on its way.
//
// Timekeeper. There is no timer goroutine. Busy roles check the earliest
// deadline every few loop iterations (one atomic load when no timer is
// armed). When every role is idle, the one that wins the timekeeper flag
// parks with the earliest deadline as its timeout; the others park
// indefinitely. An expiry therefore wakes one role, not a herd; arming an
// earlier deadline wakes the timekeeper only if it sleeps past it, and an
// idle role only if every role is idle (timerArmed).
//
// Watchdog. A handler that runs too long (spins, or blocks outside the
// runtime) would hold its role hostage. The watchdog goroutine notices a
// role whose activation counter has not moved for WatchdogThreshold and
// retires it: it claims the stuck activation by CAS on the role's activation
// counter (the holder ends an activation by CAS too, so a retirement never
// lands on a role that has moved on), a fresh role struct takes the index
// (and a fresh worker runs it), the retired role's queued pids are moved to
// the global queue, and the stuck worker finishes its activation on the
// retired role, pushing anything it wakes to the global queue, then gives
// the role up without ever parking on it. Pushes by the stuck worker race
// the retirement; the worker re-checks `retired` after each local push and
// drains if it was set (Dekker again: retire-then-drain vs push-then-check),
// and so does a holder that moves a batch into its local queue while it
// looks for work on a role retired between two activations of a chain
// (drainIfRetired).

package actor

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/runqueue"
)

// schedStats are the counters of one scheduler index; they survive role
// retirement. Written by the role holder (and the timekeeper), read by Stats.
type schedStats struct {
	activations atomic.Uint64
	parks       atomic.Uint64 // idle parks
	steals      atomic.Uint64
	tkWakes     atomic.Uint64 // wake-ups by timer expiry as timekeeper
	handoffs    atomic.Uint64 // roles handed to a spare because a handler blocked
	resumes     atomic.Uint64 // roles handed to a blocked goroutine to resume it
	retakes     atomic.Uint64 // watchdog retirements of this index
	settles     atomic.Uint64 // chains of activations ended (settleAct), for the count
	reported    uint64        // the last Activations Stats gave; under System.statsMu
	_           [64]byte
}

// sched is one scheduler role. Fields marked "holder" are touched only by the
// worker that holds the role.
type sched struct {
	id  int
	sys *System
	st  *schedStats   // shared by every role of this index; immutable pointer
	pk  chan struct{} // permit; shared by every role of this index; immutable

	next  runqueue.Next
	local runqueue.Local

	// retired is set once by the watchdog; read by the holder.
	retired atomic.Bool
	// act is moved by the holder at the start and end of every activation
	// (enterAct, chainAct, settleAct: odd while a chain of activations
	// runs). The watchdog reads it: odd and unchanged for a threshold means
	// stuck, and it retires the role by CAS of that odd value to
	// value|actRetired (watchdog.go, retake, says why a CAS).
	act atomic.Uint64
	// retakeAt is when the watchdog retired the role (UnixNano), stored
	// before its CAS on act: a holder that sees actRetired in act reads
	// it (watchdog.go, retaken). A retake whose CAS failed may leave a
	// value nobody reads.
	retakeAt atomic.Int64

	tick  uint32 // holder: loop iterations, for fairness and timer polls
	chain uint32 // holder: consecutive runnext pops

	// nc is the holder's free list of mailbox nodes: the nodes its pops
	// free, reused by its sends (worker.cache). It belongs to the role,
	// not to the goroutine, so that it follows the work: when a handler
	// blocks, the spare that takes the role pops the messages (a call's
	// Request) and the caller, resumed with the role, sends from what
	// those pops freed. Kept on the worker, the caller's cache was always
	// empty and each call's Request allocated its node, while the spare's
	// filled up and dropped what it freed. A retired role's cache stays
	// with the stuck worker that still holds the retired struct.
	nc mailbox.Cache
}

func newSched(sys *System, id int, st *schedStats, pk chan struct{}) *sched {
	return &sched{id: id, sys: sys, st: st, pk: pk}
}

// worker is a goroutine that can hold a role.
type worker struct {
	sys    *System
	role   *sched      // the role held now, or nil
	resume chan *sched // receives a role (nil: exit)
	ctx    Context     // the Context handed to handlers run by this worker
	// popped counts the user messages the activation running on this worker
	// (ctx.p) has popped and not yet recorded with Mailbox.Consumed. Worker
	// only: a plain int, as drain's local counter was. drain records it when
	// the activation ends and waitPark when the handler blocks ("Consumption
	// is flushed at block time", block.go); Context.Info subtracts it. A
	// worker runs one activation at a time, and a handler that blocks keeps
	// its worker, so it is never another actor's.
	popped int
	obs    workerObs // worker only: observation sampling (observe.go)
}

func (sys *System) newWorker() *worker {
	w := &worker{sys: sys, resume: make(chan *sched, 1)}
	w.ctx.w = w
	return w
}

// startWorker starts a goroutine holding role s.
func (sys *System) startWorker(s *sched) {
	sys.workers.Add(1)
	sys.nworkers.Add(1)
	go func() {
		defer sys.workers.Done()
		defer sys.nworkers.Add(-1)
		w := sys.newWorker()
		w.role = s
		returned := false
		defer func() {
			if !returned {
				w.handOnRole() // a handler's runtime.Goexit ends us (goexit.go)
			}
		}()
		if sys.cfg.det != nil {
			w.detLoop() // colonytest's deterministic mode (det.go)
		} else {
			w.loop()
		}
		returned = true
	}()
}

// handoff gives role s to a spare worker (or a new one).
func (sys *System) handoff(s *sched) {
	sys.spareMu.Lock()
	n := len(sys.spares)
	if n > 0 {
		w := sys.spares[n-1]
		sys.spares = sys.spares[:n-1]
		sys.spareMu.Unlock()
		w.resume <- s
		return
	}
	sys.spareMu.Unlock()
	sys.startWorker(s)
}

// becomeSpare parks w in the spare pool until it is given a role. It returns
// false if w should exit (pool full, or the system is stopping).
func (w *worker) becomeSpare() bool {
	sys := w.sys
	sys.spareMu.Lock()
	if sys.halted || len(sys.spares) >= sys.cfg.MaxSpareWorkers {
		sys.spareMu.Unlock()
		return false
	}
	sys.spares = append(sys.spares, w)
	sys.spareMu.Unlock()
	s := <-w.resume
	if s == nil {
		return false
	}
	w.role = s
	return true
}

// loop is the body of every worker: run actors while holding a role.
func (w *worker) loop() {
	for {
		s := w.role
		if s == nil {
			if !w.becomeSpare() {
				return
			}
			continue
		}
		if s.retired.Load() {
			// The watchdog took this index from us while we were stuck.
			w.giveUp(s)
			continue
		}
		pid, ok := s.findRunnable(w)
		if !ok {
			return // the system halted; our role dies with it
		}
		if pid == 0 {
			w.giveUp(s) // retired between two activations (settleAct)
			continue
		}
		w.run(pid)
	}
}

// claim takes ownership of the actor of a popped run-queue entry
// (Queued -> Running, Acquire): the one step every loop takes before it
// runs an actor. Anything else popped is a broken invariant.
func (sys *System) claim(v uint64) (Pid, *proc) {
	pid := unpack(sys.node, v)
	sl := sys.slab.At(pid.idx)
	if sl == nil || !sl.Word.Pop(pid.gen) {
		sys.badPop(pid)
	}
	return pid, sl.Rec()
}

func (sys *System) badPop(pid Pid) {
	sl := sys.slab.At(pid.idx)
	if sl == nil {
		panic("actor: broken invariant: popped " + pid.String() + " naming no slot")
	}
	g, e, st := sl.Word.Snapshot()
	panic("actor: broken invariant: popped " + pid.String() + " whose slot is not queued (" +
		st.String() + " gen " + itoa(g) + " epoch " + itoa(e) + ")")
}

// run takes ownership of the popped pid and runs it.
func (w *worker) run(v uint64) {
	sys := w.sys
	pid, p := sys.claim(v)
	s := w.role
	if g := p.g; g != nil {
		// A handler is parked in a wait on goroutine g: give it our role and
		// step aside. p.g was written before the park CAS we just acquired.
		p.g = nil
		s.st.resumes.Add(1)
		w.role = nil
		g.resume <- s
		return
	}
	s.enterAct()
	w.runActivation(s, p) // w.activate(p), sampled while observing (observe.go)
	if r := w.role; !r.chainAct() {
		w.sys.retaken(r, pid)
		w.giveUp(r)
	}
}

// actRetired marks the activation counter of a role the watchdog retired.
const actRetired = 1 << 63

// The activation counter (sched.act) and its three moves, all by the
// holder. Invariant: act is odd from enterAct until settleAct, which the
// holder reaches before it parks on the role or hands the role away; in
// between it moves by chainAct at the end of every activation. The
// watchdog retires a role only by CAS of an odd value it saw unchanged
// (watchdog.go), and each move but enterAct is a CAS too, so exactly one
// of the holder and the watchdog wins any race; the loser of the holder's
// CAS sees actRetired and gives the role up before it could park on it.
//
// Why a chain rather than a bracket per activation: a role busy with one
// actor after another never leaves the odd state, so each activation costs
// one CAS (chainAct) where a bracket cost a store and a CAS. The watchdog
// needs only to see the counter move; a role between two activations of a
// chain is busy, not parked. A stall between activations (a long timer
// poll) can look like a stuck activation to the watchdog; retiring such a
// role is harmless (its holder gives the role up at its next chainAct or
// settleAct, running at most one more activation on it, and leaves no
// batch it took on the retired role's queue: drainIfRetired) and
// needs the same 15 ms with work waiting.
//
// Counting: a chain of k activations moves act by 1 (enterAct) + 2k
// (chainAct) + 1 (settleAct), half of which is k+1; st.settles counts the
// chains and Stats takes one per chain back out.

// enterAct starts an activation: even -> odd. A no-op inside a chain.
func (s *sched) enterAct() {
	if a := s.act.Load(); a&1 == 0 {
		s.act.Store(a + 1)
	}
}

// chainAct ends an activation and stays odd: a -> a+2. It reports false if
// the watchdog retired the role meanwhile: the holder must then give the
// role up (giveUp) and never park on it.
func (s *sched) chainAct() bool {
	a := s.act.Load()
	if a&actRetired != 0 {
		return false
	}
	if a&1 == 0 {
		return true // not in an activation (a resumed handler settled it)
	}
	return s.act.CompareAndSwap(a, a+2)
}

// settleAct ends the chain: odd -> even. The holder calls it before it parks
// on the role (findRunnable) and before it hands the role to another worker
// (waitPark). It reports false, as chainAct, if the role was retired.
func (s *sched) settleAct() bool {
	a := s.act.Load()
	if a&actRetired != 0 {
		return false
	}
	if a&1 == 0 {
		return true
	}
	// CAS, not a store: the watchdog may be claiming this very chain.
	if !s.act.CompareAndSwap(a, a+1) {
		return false // only the watchdog moves act under us: retired
	}
	s.st.settles.Add(1)
	return true
}

// giveUp drops a role the watchdog retired: whatever the holder queued on
// it goes to the global queue (the watchdog drained what was there when it
// retired the role), and the worker holds no role.
func (w *worker) giveUp(s *sched) {
	s.drainToGlobal()
	w.role = nil
}

// findRunnable returns the next pid to run, parking the role while there is
// nothing to do. It returns false when the system halts.
func (s *sched) findRunnable(w *worker) (uint64, bool) {
	sys := s.sys
	for {
		if sys.halt.Load() {
			return 0, false
		}
		s.tick++
		if s.tick&3 == 0 && sys.tm.armed.Load() {
			sys.pollTimers(w)
		}
		// 1. Fairness: now and then the global queue goes first, so pushes
		// from outside are not starved by a busy local queue.
		// One pid only, as Go's runtime does here: a batch would overflow
		// a busy local ring back into the global queue.
		if s.tick%61 == 0 {
			if v, ok := sys.global.Pop(); ok {
				return v, true
			}
		}
		// 1b. The timer lane (timer.go): actors woken by an expiry run
		// before the run queues, so a long queue does not make them late.
		if sys.tm.due.Len() > 0 { // one load, not a call, on the common path
			if v, ok := sys.popDue(); ok {
				return v, true
			}
		}
		// 2. runnext, unless a chain of runnext hand-offs has used up its
		// share (the woken actor inherits the waker's time slice).
		if s.chain < 16 {
			if v := s.next.Take(); v != 0 {
				s.chain++
				return v, true
			}
		}
		s.chain = 0
		// 3. Local, global, then steal.
		if v, ok := s.local.Pop(); ok {
			return v, true
		}
		if v := s.next.Take(); v != 0 {
			return v, true
		}
		if v, ok := sys.global.PopBatch(&s.local, sys.nsched); ok {
			s.drainIfRetired()
			return v, true
		}
		if v, ok := s.steal(); ok {
			s.st.steals.Add(1)
			s.drainIfRetired()
			if s.local.Len() > 0 {
				sys.wakeIdle() // we took a batch: let an idle role share it
			}
			return v, true
		}
		// 4. Nothing anywhere: end the chain of activations, then park
		// (never on a role the watchdog retired: loop gives it up).
		if !s.settleAct() {
			return 0, true
		}
		s.idle(w)
	}
}

// drainIfRetired follows every move of pids onto s's queues by the holder:
// a push (push), a batch from the global queue or a steal (findRunnable).
// The watchdog may retire the role during an activation, or between two
// activations of a chain while the holder looks for work; the holder then
// finishes, or runs one more, activation on the retired role before
// chainAct tells it to give the role up. Pids it left on the retired
// role's queues would wait for that activation to end, which may be never
// (a spinning handler, one blocked outside the runtime): no live role
// looks at a retired role's queues. So we moved pids in and now look at
// retired; the watchdog sets retired and then drains (Dekker: one of us
// sees the other's pids or flag).
func (s *sched) drainIfRetired() {
	if s.retired.Load() {
		s.drainToGlobal()
	}
}

func (s *sched) hasWork() bool {
	sys := s.sys
	if s.next.Peek() != 0 || s.local.Len() > 0 || sys.global.Len() > 0 || sys.halt.Load() {
		return true
	}
	for i := range sys.roles {
		if r := sys.roles[i].Load(); r != nil && r != s && r.local.Len() > 0 {
			return true
		}
	}
	return false
}

func (s *sched) steal() (uint64, bool) {
	sys := s.sys
	n := len(sys.roles)
	if n == 1 {
		return 0, false
	}
	start := int(cheapRand() % uint32(n))
	for i := 0; i < n; i++ {
		r := sys.roles[(start+i)%n].Load()
		if r == nil || r == s {
			continue
		}
		if v, ok := s.local.StealInto(&r.local); ok {
			return v, true
		}
	}
	return 0, false
}

// wakeIdle wakes one idle role for newly queued work, if any is idle (one
// load when none is). Call it after the push.
//
// (A spinning phase before parking — Go's spinning Ms — was tried: while a
// role spun, enqueues woke nobody. It cost the outside-producer workload
// its batching: the spinner picked the consumer up after every message, and
// counting went from 1.4x to 3.2x of goroutines while nothing else moved
// beyond noise; docs/benchmarks.md. Removed.)
func (sys *System) wakeIdle() {
	if sys.anyIdle() {
		sys.wakeOne()
	}
}

// idle parks the role until an enqueue, a timer or a halt wakes it.
func (s *sched) idle(w *worker) {
	sys := s.sys
	sys.setIdle(s.id)
	// Re-check after publishing idleness: an enqueuer that pushed before our
	// bit was visible did not see us (Dekker with ready/wakeOne).
	if s.hasWork() || sys.timerDue() {
		if !sys.clearIdle(s.id) {
			<-s.pk // the waker that cleared our bit is sending a permit
		}
		return
	}
	s.st.parks.Add(1)
	if sys.tm.armed.Load() && sys.timekeeper.CompareAndSwap(-1, int32(s.id)) {
		s.parkTimekeeper(w)
		return
	}
	t0 := sys.parkBegin(s.id) // parked time (observe.go)
	<-s.pk
	sys.parkEnd(s.id, t0)
}

// parkTimekeeper parks with the earliest deadline as the timeout.
func (s *sched) parkTimekeeper(w *worker) {
	sys := s.sys
	// Publish how long we will sleep, then re-read the earliest deadline:
	// an armer publishes its deadline and then reads tkUntil (timerArmed),
	// so either we see its deadline here or it sees ours and wakes us.
	n := sys.tm.next.Load()
	for {
		sys.tkUntil.Store(n)
		n2 := sys.tm.next.Load()
		if n2 >= n {
			break
		}
		n = n2
	}
	d := sys.untilTick(n)
	if d <= 0 {
		sys.timekeeper.Store(-1)
		if !sys.clearIdle(s.id) {
			<-s.pk
		}
		return
	}
	t := time.NewTimer(d)
	t0 := sys.parkBegin(s.id) // parked time (observe.go)
	select {
	case <-s.pk:
		sys.parkEnd(s.id, t0)
		t.Stop()
		sys.timekeeper.Store(-1)
	case <-t.C:
		sys.parkEnd(s.id, t0)
		sys.timekeeper.Store(-1)
		s.st.tkWakes.Add(1)
		if !sys.clearIdle(s.id) {
			<-s.pk
		}
		sys.pollTimers(w)
	}
}

// setIdle publishes role id as idle.
func (sys *System) setIdle(id int) {
	sys.idle[id/64].Or(1 << (id % 64))
}

// clearIdle clears role id's idle bit; false if someone else cleared it (and
// so owes it a permit).
func (sys *System) clearIdle(id int) bool {
	word := &sys.idle[id/64]
	bit := uint64(1) << (id % 64)
	for {
		m := word.Load()
		if m&bit == 0 {
			return false
		}
		if word.CompareAndSwap(m, m&^bit) {
			return true
		}
	}
}

// wakeOne wakes exactly one idle role, if any: one load when none is idle.
func (sys *System) wakeOne() bool {
	for i := range sys.idle {
		word := &sys.idle[i]
		for {
			m := word.Load()
			if m == 0 {
				break
			}
			bit := m & -m
			if word.CompareAndSwap(m, m&^bit) {
				id := i*64 + bits.TrailingZeros64(bit)
				sys.permits[id] <- struct{}{}
				return true
			}
		}
	}
	return false
}

// timerArmed is called after an arm lowered tm.next to dl (wheel ticks): the
// timer's deadline, or when the wheel wants Refine called because the arm
// filled a coarse slot (publishArmedLocked). Somebody must be awake in
// time to poll then, and waking a role costs a channel wake, so only when
// needed:
//   - a timekeeper parked until after dl must re-plan: wake it;
//   - a timekeeper parked until dl or before re-plans when it wakes;
//   - with no timekeeper parked, a role that is running polls the timers,
//     and when it goes idle it parks as the timekeeper (idle reads the
//     timer count after publishing its idle bit, Dekker with our publish
//     before reading the mask); only if every role is idle is one woken.
//
// (Waking on every earlier deadline made each Call with a timeout wake a
// parked role: a call armed and cancelled its timer with no other timer
// pending.)
func (sys *System) timerArmed(dl int64) {
	if id := sys.timekeeper.Load(); id >= 0 {
		if sys.tkUntil.Load() > dl && sys.clearIdle(int(id)) {
			sys.permits[id] <- struct{}{}
		}
		return
	}
	if sys.allIdle() {
		sys.wakeOne()
	}
}

// allIdle reports whether every role's idle bit is set.
func (sys *System) allIdle() bool {
	for i := range sys.idle {
		want := ^uint64(0)
		if rest := sys.nsched - i*64; rest < 64 {
			want = 1<<rest - 1
		}
		if sys.idle[i].Load() != want {
			return false
		}
	}
	return true
}

// wakeAll wakes every idle role (halt).
func (sys *System) wakeAll() {
	for sys.wakeOne() {
	}
}

// anyIdle is one load per mask word.
func (sys *System) anyIdle() bool {
	for i := range sys.idle {
		if sys.idle[i].Load() != 0 {
			return true
		}
	}
	return false
}

// push makes pid runnable from this worker: on its role's local queue (or
// runnext), or the global queue if the worker holds no live role.
func (w *worker) push(pid Pid, next bool) {
	sys := w.sys
	if raceEnabled {
		sys.assertQueued(pid)
	}
	s := w.role
	if s == nil || s.retired.Load() {
		sys.global.Push(pid.packed())
		sys.wakeIdle()
		return
	}
	v := pid.packed()
	if next && !(raceEnabled && cheapRand()%4 == 0) { // race builds shake the order
		v = s.next.Set(v)
		if v == 0 {
			goto check
		}
	}
	s.local.Push(v, &sys.global)
	sys.wakeIdle()
check:
	s.drainIfRetired()
}

// ready makes pid runnable after a wake moved it to Queued. w is the calling
// worker, nil outside the system.
func (sys *System) ready(w *worker, pid Pid, next bool) {
	if w != nil {
		w.push(pid, next)
		return
	}
	if raceEnabled {
		sys.assertQueued(pid)
	}
	sys.global.Push(pid.packed())
	sys.wakeIdle()
}

// drainToGlobal moves everything queued on a retired role to the global
// queue. Safe from any goroutine: it only consumes.
func (s *sched) drainToGlobal() {
	sys := s.sys
	moved := false
	if v := s.next.Take(); v != 0 {
		sys.global.Push(v)
		moved = true
	}
	s.local.Drain(func(v uint64) { sys.global.Push(v); moved = true })
	if moved {
		sys.wakeOne()
	}
}

var randState atomic.Uint32

// cheapRand is a shared xorshift step; good enough for victim choice and the
// race-build order shake, and never a correctness input.
func cheapRand() uint32 {
	for {
		x := randState.Load()
		y := x
		if y == 0 {
			y = 2463534242
		}
		y ^= y << 13
		y ^= y >> 17
		y ^= y << 5
		if randState.CompareAndSwap(x, y) {
			return y
		}
	}
}

func itoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

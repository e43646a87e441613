package actor

// Design note: the deterministic scheduler (colonytest's mode).
//
// Problem. A test of an actor program runs on N scheduler roles, real
// goroutines and the wall clock: the order in which actors run and
// timers fire is the Go runtime's and the machine's, so an ordering bug
// shows up once in a thousand runs and never twice the same way. Package
// colonytest offers a mode in which every such decision is the test's,
// drawn from a seed or from rapid, so a run replays from its seed and a
// failure shrinks to a short schedule. The production scheduler must pay
// nothing for it.
//
// Rejected. A second engine (a simulator of actors): it would test itself,
// not Colony. Hooks at each choice point of the production loop
// (findRunnable, push): a branch on every activation and every wake, and
// the production loop's choices (runnext, stealing, the fairness turn,
// the race build's shake) would still have to be undone.
//
// Protocol. A System started with Config.det (set only through
// internal/detmode, by colonytest) runs its one scheduler role (colonytest
// asks for Schedulers 1, Budget 1 and no watchdog) on detLoop instead of
// loop; startWorker is the only place that looks, once per goroutine. The
// role is born marked retired, so every push, from a handler or from
// outside, lands on the global queue in push order (push sends a retired
// role's pids there; the mark means nothing else to detLoop, which never
// looks at it). Time is the test's too: colonytest runs the System inside
// a testing/synctest bubble, so the wheel's clock (time.Since of a start
// taken in the bubble), the park timeout and every time.Timer of the
// engine run on the bubble's virtual clock, which jumps to the next
// deadline when every goroutine of the test is durably blocked.
//
// A step is one activation, one message (Budget 1). Before each step,
// detNext (a) holds outside wake-ups back until now (below) and then
// settles: Hooks.Settle (synctest.Wait) returns when every other goroutine
// of the test is durably blocked, so the test body and its callbacks never
// run while a step does, and what they did before is all queued; (b) fires
// the timers due at the virtual now, fails the calls a fault chose
// (Hooks.CallTimeout, asked by armWait) and lands the messages in flight
// (Deliveries, below); (c) moves what became runnable since
// the last step (and the deliveries: below) from the global queue and the
// timer lane to its ready list, that batch in slot order (several wakes in one step may come in
// the order of a map: links and monitors beyond a few are kept in one),
// after the older entries; (d) if nothing is ready, parks the role
// (detIdle) with the next deadline as its timeout (virtual: it returns at
// once when nothing else can move) and starts again; before that, the
// last step's actor, if its budget queued it again with nothing to do,
// takes its step at once, undrawn and untraced (parksOnly); (e) draws which
// ready actor runs (Hooks.Choose; 0 is the oldest, so a shrunk schedule is
// the least reordering of first-come-first-served) and whether a fault
// kills it first (Hooks.Fault).
//
// Deliveries. A step's plain sends (send, from a handler or the test) are
// not put in the receiver's mailbox at once: they are in flight, one queue
// per (sender, receiver) pair, until the next boundary, where each pair's
// queue lands whole, in order, unless Hooks.Hold keeps it in flight one
// more step (landing is the canonical choice). So another sender's
// message can overtake one sent earlier, as on a busy System or across
// nodes, while one sender's messages to one receiver keep their order.
// Anything else that reaches a receiver (a call's Request: callStart; a
// Down or an Exit message: deliver) first lands every message in flight
// to it (detFlushTo), so it never overtakes a message sent before it; the
// signal lane overtakes user messages anyway. When nothing is runnable,
// whatever is in flight lands (no hold): the clock never moves with a
// message in flight. Sends to a bounded mailbox go at once (their
// ErrMailboxFull is the sender's to see).
//
// Outside wake-ups. A step can wake a goroutine outside the System (a
// reply to the test body's Call, a Watch's Done, StartServer's ack), which
// would then run alongside the rest of the step. Those wake-ups go through
// detHold and are performed at the next step boundary, just before it
// settles: the body sees the step's effects, and only once the step is
// over.
//
// What stays outside the mode's control: goroutines the test starts
// itself (two of them calling into the System race as ever), channels the
// handlers share with the body, and the order of several messages one
// step sends to one actor through a map (the Downs of several monitors of
// one watcher on one target). colonytest's self-check runs a body twice
// and compares the traces, which catches these. Context.Blocking and
// System.Helper start goroutines the mode cannot schedule: they are
// refused (ErrNondeterministic, a panic for Helper).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/colonyrt/colony/internal/detmode"
	"github.com/colonyrt/colony/slot"
)

// ErrNondeterministic is returned, in colonytest's deterministic mode, by
// an operation that would run code the mode cannot schedule (a goroutine
// of its own): Context.Blocking. System.Helper, which has no error result,
// panics with it.
var ErrNondeterministic = errors.New("actor: not available in deterministic test mode (colonytest)")

func init() {
	detmode.WithHooks = func(c any, h *detmode.Hooks) any {
		cfg := c.(Config)
		cfg.det = &detState{h: h}
		// One role, one message a step, and no watchdog (its ticker would
		// keep the virtual clock moving for ever).
		cfg.Schedulers, cfg.Budget, cfg.WatchdogThreshold = 1, 1, -1
		return cfg
	}
}

// detState is one deterministic System's scheduler state. Fields are the
// role holder's (the one detLoop that runs at a time) unless marked.
type detState struct {
	h *detmode.Hooks // immutable

	mu   sync.Mutex
	held []func() // outside wake-ups of the current step; guarded by mu
	// Messages in flight (the design note, "Deliveries"), guarded by mu:
	// one queue per (sender, receiver) pair, in the order the pairs came.
	flight  []*flightQ
	flights map[[2]Pid]*flightQ
	cur     Pid // the actor of the step running; zero between steps
	// timeouts: calls a fault times out at the next boundary; guarded by mu.
	timeouts []*replyCell

	ready []uint64 // runnable pids, oldest first
	batch []uint64 // scratch for collect
	step  int
	last  Pid // the previous step's actor
	// of and pick: the size of the ready list at the last choice and the
	// index drawn, for detRun's trace.
	of, pick int
	// ran is the last step's actor (afterStep clears last, not ran);
	// quiet marks a step detNext found would only park it (parksOnly).
	ran   Pid
	quiet bool
	// refNames numbers the Refs the trace shows, from 1, in the order it
	// first shows them (renumberRefs).
	refNames map[Ref]int
}

// flightQ is one pair's messages in flight, oldest first.
type flightQ struct {
	from, to Pid
	msgs     []any
}

// detSend holds a plain message in flight until the next step boundary
// (the design note, "Deliveries"). It reports false, for send to go on as
// usual, for a pid that is not a live local actor (send's errors) or one
// with a bounded mailbox (its ErrMailboxFull is the sender's to see).
func (sys *System) detSend(pid Pid, msg any) bool {
	p, err := sys.lookup(pid)
	if err != nil || p.mbox.Bound() > 0 {
		return false
	}
	d := sys.cfg.det
	d.mu.Lock()
	k := [2]Pid{d.cur, pid}
	q := d.flights[k]
	if q == nil {
		if d.flights == nil {
			d.flights = make(map[[2]Pid]*flightQ)
		}
		q = &flightQ{from: d.cur, to: pid}
		d.flights[k] = q
		d.flight = append(d.flight, q)
	}
	q.msgs = append(q.msgs, msg)
	d.mu.Unlock()
	return true
}

// detFlushTo delivers every message in flight to pid now: whatever reaches
// pid otherwise (a call's Request, a Down, an Exit message) must not
// overtake a message sent to it before.
func (sys *System) detFlushTo(pid Pid) {
	d := sys.cfg.det
	d.mu.Lock()
	var out []*flightQ
	for _, q := range d.flight {
		if q.to == pid && len(q.msgs) > 0 {
			out = append(out, &flightQ{from: q.from, to: q.to, msgs: q.msgs})
			q.msgs = nil
		}
	}
	d.mu.Unlock()
	for _, q := range out {
		sys.detDeliver(q)
	}
}

// detDeliver puts q's messages in q.to's mailbox, as send would have.
func (sys *System) detDeliver(q *flightQ) {
	p, err := sys.lookup(q.to)
	if err != nil {
		sys.dropped.Add(uint64(len(q.msgs)))
		return
	}
	for _, m := range q.msgs {
		if p.mbox.Send(m, nil) != nil {
			sys.dropped.Add(1) // it died meanwhile
		}
	}
	if p.slot.Word.WakeMsg(q.to.gen) == slot.Enqueue {
		sys.ready(nil, q.to, false)
	}
}

// deliveries ends the flight of the messages sent since the last boundary
// and of those held before: each pair's queue is delivered whole, unless
// Hooks.Hold keeps it in flight (with force, none is kept: nothing else
// can move). It reports whether anything is still in flight.
func (d *detState) deliveries(sys *System, force bool) bool {
	d.mu.Lock()
	qs := d.flight
	d.flight = nil
	d.mu.Unlock()
	var keep []*flightQ
	for _, q := range qs {
		if len(q.msgs) == 0 {
			d.mu.Lock()
			delete(d.flights, [2]Pid{q.from, q.to})
			d.mu.Unlock()
			continue
		}
		if !force && d.h.Hold != nil && d.h.Hold() {
			d.trace(sys, "hold", q.to, nil, "from "+detPidOrOutside(q.from)+": "+d.describe(sys, q.msgs[0]), 0, 0)
			keep = append(keep, q)
			continue
		}
		d.mu.Lock()
		delete(d.flights, [2]Pid{q.from, q.to})
		d.mu.Unlock()
		sys.detDeliver(q)
	}
	d.mu.Lock()
	d.flight = append(keep, d.flight...) // sends made by the deliveries (none: they run no handler) come after
	n := len(d.flight)
	d.mu.Unlock()
	return n > 0
}

// detCallTimeout asks Hooks.CallTimeout about a call by pid, waiting on
// cell with a timeout: a fault fails the cell with ErrTimeout at the next
// boundary, whatever the callee does by then (its timer stays armed, and
// finds the cell done). The test's own calls (pid zero: from outside) are
// its instruments and never fail this way.
func (sys *System) detCallTimeout(pid Pid, cell *replyCell) {
	d := sys.cfg.det
	if pid.IsZero() || d.h.CallTimeout == nil || !d.h.CallTimeout() {
		return
	}
	d.trace(sys, "timeout", pid, nil, "its call will time out (fault)", 0, 0)
	d.mu.Lock()
	d.timeouts = append(d.timeouts, cell)
	d.mu.Unlock()
}

// failTimeouts fails the calls detCallTimeout chose.
func (d *detState) failTimeouts(sys *System) {
	d.mu.Lock()
	cs := d.timeouts
	d.timeouts = nil
	d.mu.Unlock()
	for _, c := range cs {
		c.complete(sys, nil, nil, ErrTimeout)
	}
}

func detPidOrOutside(p Pid) string {
	if p.IsZero() {
		return "outside"
	}
	return detPid(p)
}

// detRefuse returns ErrNondeterministic, naming op, in deterministic mode.
func (sys *System) detRefuse(op string) error {
	if sys.cfg.det == nil {
		return nil
	}
	return fmt.Errorf("%w: %s runs a goroutine of its own", ErrNondeterministic, op)
}

// detHold runs wake now, or at the next step boundary in deterministic
// mode (the design note, "Outside wake-ups").
func (sys *System) detHold(wake func()) {
	d := sys.cfg.det
	d.mu.Lock()
	d.held = append(d.held, wake)
	d.mu.Unlock()
}

// detLoop is loop for a deterministic System.
func (w *worker) detLoop() {
	if w.role != nil {
		w.role.retired.Store(true) // every push to the global queue (the design note)
	}
	for {
		s := w.role
		if s == nil {
			if !w.becomeSpare() {
				return
			}
			continue
		}
		v, ok := s.detNext(w)
		if !ok {
			return
		}
		w.detRun(v)
	}
}

// settle performs the held wake-ups and waits until every other goroutine
// of the test is durably blocked, again while that let more be held.
func (d *detState) settle() {
	for {
		d.mu.Lock()
		held := d.held
		d.held = nil
		d.mu.Unlock()
		for _, f := range held {
			f()
		}
		d.h.Settle()
		d.mu.Lock()
		n := len(d.held)
		d.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

// detNext returns the next pid to run (the design note, steps a-e), or
// false when the System halts.
func (s *sched) detNext(w *worker) (uint64, bool) {
	sys := s.sys
	d := sys.cfg.det
	d.mu.Lock()
	d.cur = Pid{} // sends from here to the next step are the test's
	d.mu.Unlock()
	d.afterStep(sys)
	for {
		d.settle()
		if sys.halt.Load() {
			return 0, false
		}
		if sys.tm.armed.Load() {
			sys.pollTimers(w)
			d.settle()
		}
		d.failTimeouts(sys)
		inFlight := d.deliveries(sys, false)
		d.collect(sys)
		if v, ok := d.parksOnly(sys); ok {
			d.quiet = true
			return v, true
		}
		if len(d.ready) == 0 {
			if inFlight {
				d.deliveries(sys, true) // nothing else can move: land them
				continue
			}
			s.detIdle()
			continue
		}
		i := 0
		if len(d.ready) > 1 {
			i = d.h.Choose(len(d.ready))
			if i < 0 || i >= len(d.ready) {
				panic(fmt.Sprintf("actor: colonytest's Choose returned %d for %d candidates", i, len(d.ready)))
			}
		}
		v := d.ready[i]
		d.ready = slices.Delete(d.ready, i, i+1)
		d.step++
		pid := unpack(sys.node, v)
		d.last, d.ran = pid, pid
		if d.h.Fault != nil {
			if p := sys.procOf(pid); p != nil && p.exit.Load() == alive {
				if d.h.Fault(detmode.Step{N: d.step, Pid: detPid(pid), Actor: behaviourType(p.beh), Raw: pid}) {
					d.trace(sys, "kill", pid, p.beh, "", len(d.ready)+1, i)
					sys.exitSignal(nil, Pid{}, pid, Kill)
				}
			}
		}
		d.pick, d.of = i, len(d.ready)+1
		return v, true
	}
}

// collect moves what became runnable since the last step to the ready
// list: the timer lane's and the global queue's pids, as one batch in slot
// order (the design note, step c).
func (d *detState) collect(sys *System) {
	b := d.batch[:0]
	for {
		v, ok := sys.tm.due.Pop()
		if !ok {
			break
		}
		b = append(b, v)
	}
	for {
		v, ok := sys.global.Pop()
		if !ok {
			break
		}
		b = append(b, v)
	}
	slices.Sort(b) // index in the high half: slot order
	d.ready = append(d.ready, b...)
	d.batch = b[:0]
}

// parksOnly finds the last step's actor in the ready list if its budget
// (one message) sent it there with nothing left to do: its next step
// would only park it. That step is taken at once, with no draw and no
// trace line (it would otherwise follow every single message). Only the
// last actor is looked at: a budget yield is the only way to be queued
// with nothing to do, and looking costs a Pop and a Yield of its word.
func (d *detState) parksOnly(sys *System) (uint64, bool) {
	if d.ran.IsZero() {
		return 0, false
	}
	pid := d.ran
	d.ran = Pid{}
	v := pid.packed()
	i := slices.Index(d.ready, v)
	if i < 0 {
		return 0, false
	}
	sl := sys.slab.At(pid.idx)
	if !sl.Word.Pop(pid.gen) { // we own it now (Acquire), until the Yield
		return 0, false
	}
	p := sl.Rec()
	idle := p.exit.Load() == alive && p.started && p.g == nil && !p.stop &&
		p.mbox.Empty() && (p.ext == nil || len(p.ext.save) == 0)
	sl.Word.Yield(pid.gen) // Queued again, and still in the ready list
	if !idle {
		return 0, false
	}
	d.ready = slices.Delete(d.ready, i, i+1)
	return v, true
}

// detIdle parks the role until a push, a timer or a halt: with the next
// deadline as its timeout (a virtual one), or indefinitely if no timer is
// armed. The idle bit makes pushes from outside wake us (wakeIdle) and an
// earlier deadline armed from outside too (timerArmed: every role idle).
func (s *sched) detIdle() {
	sys := s.sys
	sys.setIdle(s.id)
	if sys.global.Len() > 0 || sys.tm.due.Len() > 0 || sys.halt.Load() || sys.timerDue() {
		if !sys.clearIdle(s.id) {
			<-s.pk // the waker that cleared our bit is sending a permit
		}
		return
	}
	if !sys.tm.armed.Load() {
		<-s.pk
		return
	}
	t := time.NewTimer(sys.untilTick(sys.tm.next.Load()))
	select {
	case <-s.pk:
		t.Stop()
	case <-t.C:
		if !sys.clearIdle(s.id) {
			<-s.pk
		}
	}
}

// detRun is run for a deterministic System: it traces the step once it
// owns the actor.
func (w *worker) detRun(v uint64) {
	sys := w.sys
	d := sys.cfg.det
	pid, p := sys.claim(v)
	kind := "run"
	if p.exit.Load() != alive {
		kind = "reap"
	}
	if d.quiet {
		d.quiet = false // parksOnly's step: it parks
	} else {
		d.trace(sys, kind, pid, p.beh, d.input(sys, p), d.of, d.pick)
	}
	d.mu.Lock()
	d.cur = pid // the sender of what the step sends
	d.mu.Unlock()
	s := w.role
	if g := p.g; g != nil {
		p.g = nil
		s.st.resumes.Add(1)
		w.role = nil
		g.resume <- s
		return
	}
	s.enterAct()
	w.runActivation(s, p)
	if r := w.role; !r.chainAct() {
		w.giveUp(r)
	}
}

// afterStep traces the exit of the previous step's actor, if it died in
// its step.
func (d *detState) afterStep(sys *System) {
	if d.last.IsZero() {
		return
	}
	pid := d.last
	d.last = Pid{}
	if p := sys.slab.At(pid.idx).Rec(); p == nil || p.pid != pid || p.exit.Load() != alive {
		d.trace(sys, "exit", pid, nil, "", 0, 0)
	}
}

// input says what p's step takes. p is ours (detRun popped it).
func (d *detState) input(sys *System, p *proc) string {
	switch {
	case p.exit.Load() != alive:
		return ""
	case p.g != nil:
		return "resume"
	case p.mbox.HasSignal():
		return "signal"
	case p.ext != nil && len(p.ext.save) > 0:
		return d.describe(sys, p.ext.save[0])
	}
	in := "nothing (parks)" // its budget ran out with the mailbox empty
	p.mbox.Peek(1, func(m any) bool { in = d.describe(sys, m); return false })
	if !p.started {
		in = "init, then " + in
	}
	return in
}

func (d *detState) trace(sys *System, kind string, pid Pid, beh Actor, input string, of, pick int) {
	if d.h.Trace == nil {
		return
	}
	e := detmode.Event{N: d.step, At: time.Duration(sys.tm.now()), Kind: kind, Pid: detPidOrOutside(pid), Input: input, Of: of, Pick: pick}
	if beh != nil {
		e.Actor = behaviourType(beh)
	}
	d.h.Trace(e)
}

// detPid is pid without its node (process-unique, so different in two runs
// of one test): <0.index.generation>.
func detPid(p Pid) string { return fmt.Sprintf("<0.%d.%d>", p.idx, p.gen) }

// describe formats a message for the trace, stably across runs: pids and
// timer refs lose their node (<0.index.generation>, #TimerRef<0.n>), refs
// are renumbered (refName), and a value that prints an address (a pointer,
// a panic's stack) is given by its type alone.
func (d *detState) describe(sys *System, m any) string {
	var s string
	switch x := m.(type) {
	case Request:
		return "call " + d.describe(sys, x.Msg)
	case Down:
		s = "Down{" + x.Ref.String() + " "
		if x.Name != "" {
			s += "name " + x.Name + " "
		}
		s += detPid(x.Pid) + " " + fmt.Sprint(x.Reason) + "}"
	case Exit:
		s = "Exit{" + detPid(x.From) + " " + fmt.Sprint(x.Reason) + "}"
	case ReceiveTimeout:
		return "ReceiveTimeout"
	default:
		s = fmt.Sprintf("%T %v", m, m)
	}
	s = strings.ReplaceAll(s, fmt.Sprintf("<%d.", sys.node), "<0.")
	if strings.Contains(s, "0x") || strings.Contains(s, "\n") {
		s = fmt.Sprintf("%T", m)
	}
	s = d.renumberRefs(s)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// renumberRefs writes each Ref in s (#Ref<n>, Ref.String) as the run's own
// number for it, #Ref<0.k>: k counts the refs in the order the trace first
// shows them. A Ref's n is process-wide (refSeq), so the same seed run
// twice in one process gets other n's; k is the same in both runs. Role
// holder only (refNames).
func (d *detState) renumberRefs(s string) string {
	const open = "#Ref<"
	if !strings.Contains(s, open) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		b.WriteString(s[:i+len(open)])
		s = s[i+len(open):]
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseUint(s[:j], 10, 64)
		if j == 0 || j == len(s) || s[j] != '>' || err != nil {
			continue // not a Ref's String: left as it is
		}
		k, ok := d.refNames[Ref(n)]
		if !ok {
			if d.refNames == nil {
				d.refNames = make(map[Ref]int)
			}
			k = len(d.refNames) + 1
			d.refNames[Ref(n)] = k
		}
		b.WriteString("0." + strconv.Itoa(k))
		s = s[j:]
	}
	b.WriteString(s)
	return b.String()
}

// detWake is complete's wake of a waiter outside the System, held to the
// step's end in deterministic mode (detHold).
func (r *replyCell) detWake() {
	if r.closeDone {
		close(r.done)
	} else {
		r.done <- struct{}{}
	}
}

// Design note: observation.
//
// Problem. A service owner asks which actor has the long mailbox, which
// supervisor keeps restarting, whether the schedulers are saturated and
// what an actor crashed with; the observer (observer/) and the Prometheus
// collector (observer/prom) answer from the runtime's own counters. Some
// exist (Stats, Info); the rest must be counted here: exits by reason
// class, time the schedulers spend parked, message handling time and
// mailbox latency, and a way to walk every actor in pages. A System that
// nobody observes must pay nothing measurable for any of it.
//
// Rejected. Timing every message: two clock reads per message cost more
// than the ping-pong hop itself (~60 ns). A shared counter per event: one
// cache line every scheduler fights over on every exit. Per-actor fields:
// the record is 176 bytes, one size class (proc.go), and every byte there
// is paid a million times.
//
// Protocol. Counters live in observeState, one padded obsIndex per
// scheduler index plus one for goroutines outside the schedulers, so each
// is written by the holder of its role (atomics, uncontended; a retired
// role's stuck worker may share an index for a moment). Exits are always
// counted (a death costs far more than one uncontended add). Everything
// else runs only while Observe's count is above zero (obs.on): the hot
// paths then pay one load of a line nobody writes (send, activation) and
// nothing else. Parked time is counted always too: two clock reads per
// idle park, which already costs a channel wake, and a counter that ran
// only while observed would miss a park begun before Observe (an idle
// scheduler may stay parked for hours), so its busy time would be wrong
// from the first scrape on.
//
// While on:
//   - Handling time: one activation in about 64 per scheduler index is
//     timed (a multiplicative hash of the role's loop counter picks it, so
//     two actors taking turns are both sampled); its wall time, blocking
//     included, divided by the messages it took, is recorded once per
//     message in a log2 histogram.
//   - Mailbox latency: one send in 64 per worker (per goroutine outside,
//     one shared counter) records (pid, position, time) in a small table
//     indexed by the slot index (obsLat). The position is what the
//     mailbox had ever accepted once the message was in, so the message
//     has been taken when the mailbox's taken count reaches it. Every
//     activation that ends looks at its pid's entry, one load, and
//     records send-to-end-of-activation if it is there and taken. An
//     entry is claimed by CAS of its pid word, so a sender and the
//     receiver never both own it; one whose receiver died is taken over
//     after a second. An ABA of the same pid sampled twice may mix the
//     two samples' figures: both are samples of that actor.
//   - (Always, see above.) Parked time: a role records when it parks and
//     adds the time parked when it wakes; busy time is the time since
//     Start less the time parked, so utilisation over a window is
//     Δbusy/Δwall. A reader may miss a park that ends between its two
//     loads (parked, then parkSince), reading busy a park too high for a
//     moment: a reader that needs a monotonic counter keeps the largest
//     value it has seen (observer/metrics does).
//   - Blocked stacks (ObserveStacks, a count of its own: a label costs a
//     block about a microsecond): a handler that blocks labels its
//     goroutine (pprof labels) with its pid until it resumes, so
//     BlockedStack can find its stack in the goroutine profile.
//
// Reports (crashes, supervisors' reports) reach observers through
// WatchReports, a tee beside Config.Reporter that costs one load per
// report when nobody watches.

package actor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/bits"
	"net"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/colonyrt/colony/slot"
)

// Exit reason classes (ExitCounts).
const (
	exitNormal = iota
	exitShutdown
	exitKilled
	exitPanic
	exitOther
	numExitClasses
)

// exitClass maps a reason onto ExitCounts' classes.
func exitClass(r Reason) int {
	switch v := r.(type) {
	case Atom:
		switch v {
		case Normal:
			return exitNormal
		case Shutdown:
			return exitShutdown
		case Killed, Kill:
			return exitKilled
		}
	case ShutdownWith:
		return exitShutdown
	case Panic:
		return exitPanic
	case replacedReason:
		return exitClass(v.exit)
	}
	return exitOther
}

// Histogram buckets: log2 of nanoseconds, from 256 ns (bucket 0: up to
// 2^8 ns) to 2^(8+histBuckets-2) ns (about 17 s); the last bucket holds
// the rest.
const (
	histShift   = 8
	histBuckets = 28
)

// hist is a log2 histogram of durations; every field is atomic (a retired
// role's worker may write an index's histogram beside its new holder).
type hist struct {
	counts [histBuckets]atomic.Uint64
	count  atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// observe records n observations of d nanoseconds each, summing to total.
func (h *hist) observe(d int64, n uint64, total int64) {
	b := 0
	if d > 1<<histShift {
		b = bits.Len64(uint64(d-1)) - histShift
		if b >= histBuckets {
			b = histBuckets - 1
		}
	}
	h.counts[b].Add(n)
	h.count.Add(n)
	h.sum.Add(total)
}

// obsIndex is the observation counters of one scheduler index (or of the
// goroutines outside the schedulers: the last one). Padded so that two
// indices never share a cache line.
type obsIndex struct {
	exits     [numExitClasses]atomic.Uint64
	parked    atomic.Int64  // nanoseconds parked since Start
	parkSince atomic.Int64  // runtime clock at the current park's start; 0: not parked
	msgs      atomic.Uint64 // messages taken by activations, while on
	handling  hist
	latency   hist
	_         [64]byte
}

// obsLat is one mailbox-latency sample in flight (the design note).
type obsLat struct {
	pid atomic.Uint64 // Pid.packed of the destination; 0 free, latBusy being written
	pos atomic.Uint64 // the mailbox's accepted count with the message in
	at  atomic.Int64  // runtime clock at the send
}

const (
	latSlots   = 1024
	latBusy    = ^uint64(0) // no pid packs to it: slot indices stay below 1<<31
	latStale   = int64(time.Second)
	sampleMask = 63 // one in sampleMask+1
)

// workerObs is a worker's own observation state. Worker only.
type workerObs struct {
	sends uint32 // sends made while on, for sampling
	taken uint64 // the mailbox's taken count at the end of the last drain
}

// observeState is a System's observation state (the design note).
type observeState struct {
	_  [64]byte
	on atomic.Bool // Observe's count > 0: sampling runs
	_  [63]byte

	// stacks: ObserveStacks's count > 0: blocked handlers are labelled
	stacks atomic.Bool

	mu         sync.Mutex // guards users and stackUsers
	users      int
	stackUsers int

	idx      []obsIndex // one per scheduler index, then one for outside; immutable slice
	lat      [latSlots]obsLat
	outSends atomic.Uint32 // sends from outside the schedulers while on

	sinkMu sync.Mutex                    // serialises changes to sinks
	sinks  atomic.Pointer[[]*reportSink] // copy-on-write list of WatchReports sinks
}

type reportSink struct{ f func(Report) }

func (o *observeState) init(nsched int) {
	o.idx = make([]obsIndex, nsched+1)
}

// index is the obsIndex of the caller: its role's, or outside's.
func (o *observeState) index(w *worker) *obsIndex {
	if w != nil && w.role != nil {
		return &o.idx[w.role.id]
	}
	return &o.idx[len(o.idx)-1]
}

// exited counts a death (finalise). Always on.
func (o *observeState) exited(w *worker, r Reason) {
	o.index(w).exits[exitClass(r)].Add(1)
}

// report hands r to every WatchReports sink.
func (o *observeState) report(r Report) {
	if l := o.sinks.Load(); l != nil {
		for _, s := range *l {
			s.f(r)
		}
	}
}

// parkBegin is called by a role about to park: it returns the runtime
// clock (never 0), whether observing or not (design note: parked time is
// always counted).
func (sys *System) parkBegin(id int) int64 {
	t := sys.tm.now() | 1 // never 0
	sys.obs.idx[id].parkSince.Store(t)
	return t
}

// parkEnd adds the park that began at t0 to role id's parked time.
func (sys *System) parkEnd(id int, t0 int64) {
	x := &sys.obs.idx[id]
	x.parkSince.Store(0)
	x.parked.Add(sys.tm.now() - t0)
}

// runActivation runs p's activation, sampled while observing. Holder of
// role s only.
func (w *worker) runActivation(s *sched, p *proc) {
	if !w.sys.obs.on.Load() {
		w.activate(p)
		return
	}
	w.activateObserved(s, p)
}

// activateObserved is runActivation while observing (the design note).
func (w *worker) activateObserved(s *sched, p *proc) {
	sys := w.sys
	sample := s.tick*0x9E3779B9 < (1<<32)/(sampleMask+1)
	var t0 int64
	if sample {
		t0 = sys.tm.now()
	}
	// The messages the activation took: drain notes the mailbox's taken
	// count while it still owns p (w.obs.taken). Read here, after
	// activate, the count could include an activation that ran elsewhere
	// after p was released (it did: 117 extra in 20000 under -race).
	n0 := p.mbox.Taken()
	w.obs.taken = n0 // if drain does not run (a dead actor, a panic in Init)
	w.activate(p)
	n := w.obs.taken - n0
	x := sys.obs.index(w)
	x.msgs.Add(n)
	now := int64(0)
	if sample {
		now = sys.tm.now()
		if n > 0 {
			d := now - t0
			x.handling.observe(d/int64(n), n, d)
		}
	}
	e := &sys.obs.lat[p.pid.idx%latSlots]
	k := p.pid.packed()
	if e.pid.Load() != k {
		return
	}
	if p.mbox.Taken() < e.pos.Load() && p.exit.Load() == alive {
		return
	}
	at := e.at.Load()
	if !e.pid.CompareAndSwap(k, 0) || p.exit.Load() != alive {
		return
	}
	if now == 0 {
		now = sys.tm.now()
	}
	x.latency.observe(now-at, 1, now-at)
}

// sent samples a send to p for the mailbox latency (the design note). The
// caller checked obs.on.
func (sys *System) sent(w *worker, p *proc) {
	if w != nil {
		w.obs.sends++
		if w.obs.sends&sampleMask != 0 {
			return
		}
	} else if sys.obs.outSends.Add(1)&sampleMask != 0 {
		return
	}
	e := &sys.obs.lat[p.pid.idx%latSlots]
	cur := e.pid.Load()
	now := sys.tm.now()
	if cur == latBusy || cur != 0 && now-e.at.Load() < latStale {
		return // a sample in flight holds the entry
	}
	n := p.mbox.Len()
	if n <= 0 || !e.pid.CompareAndSwap(cur, latBusy) {
		return // closed meanwhile, or another sender claimed the entry
	}
	e.pos.Store(p.mbox.Taken() + uint64(n))
	e.at.Store(now)
	e.pid.Store(p.pid.packed()) // publishes pos and at
}

// labelBlocked labels the goroutine of a handler about to block with its
// pid, while stacks are observed (ObserveStacks, BlockedStack); it
// reports whether it did.
func (sys *System) labelBlocked(p *proc) bool {
	if !sys.obs.stacks.Load() {
		return false
	}
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(blockedLabel, pidLabel(p.pid))))
	return true
}

// pidLabel is pid.String without fmt (it runs on every block while
// stacks are observed).
func pidLabel(pid Pid) string {
	b := make([]byte, 0, 32)
	b = append(b, '<')
	b = strconv.AppendUint(b, uint64(pid.node), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(pid.idx), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(pid.gen), 10)
	return string(append(b, '>'))
}

// unlabelBlocked clears labelBlocked's label once the handler resumes.
func unlabelBlocked(did bool) {
	if did {
		pprof.SetGoroutineLabels(context.Background())
	}
}

const blockedLabel = "colony_blocked_pid"

// Observe turns on the runtime's sampled measurements: handling time and
// mailbox latency (Observation's histograms) and messages handled (the
// schedulers' parked and busy time are counted always). They stay on until every caller of Observe has
// called its stop (a count); stop is idempotent. The observer and the
// Prometheus collector call it. While on, about one activation and one
// send in 64 are timed, and every activation adds to a counter of its
// scheduler; while off, the send and activation paths pay one load each.
func (sys *System) Observe() (stop func()) {
	return sys.obs.count(&sys.obs.users, &sys.obs.on)
}

// ObserveStacks turns on the labelling of blocked handlers' goroutines,
// which BlockedStack reads, until every caller has called its stop. It
// costs each block (a Call, a Receive that waits, a Sleep) about a
// microsecond while on: the observer turns it on only while its page is
// in use, the Prometheus collector never.
func (sys *System) ObserveStacks() (stop func()) {
	return sys.obs.count(&sys.obs.stackUsers, &sys.obs.stacks)
}

// count adds a user to *n, with flag set while *n > 0, and returns the
// user's idempotent stop.
func (o *observeState) count(n *int, flag *atomic.Bool) (stop func()) {
	o.mu.Lock()
	*n++
	flag.Store(true)
	o.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			if *n--; *n == 0 {
				flag.Store(false)
			}
			o.mu.Unlock()
		})
	}
}

// WatchReports calls f with every report the System writes (crashes,
// supervisors' and watchdog reports, System.Log's), as Config.Reporter
// gets them, from whichever goroutine writes the report, until stop is
// called (idempotent). f must not block and must not write a report
// itself. It is for observers that attach after Start; Config.Reporter
// is unchanged.
func (sys *System) WatchReports(f func(Report)) (stop func()) {
	if f == nil {
		panic("actor: WatchReports of a nil func")
	}
	o := &sys.obs
	s := &reportSink{f: f}
	o.sinkMu.Lock()
	var l []*reportSink
	if old := o.sinks.Load(); old != nil {
		l = append(l, *old...)
	}
	l = append(l, s)
	o.sinks.Store(&l)
	o.sinkMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.sinkMu.Lock()
			defer o.sinkMu.Unlock()
			var l []*reportSink
			for _, x := range *o.sinks.Load() {
				if x != s {
					l = append(l, x)
				}
			}
			if len(l) == 0 {
				o.sinks.Store(nil)
			} else {
				o.sinks.Store(&l)
			}
		})
	}
}

// ExitCounts are the actors that have exited since Start, by class of
// exit reason; cumulative counters.
type ExitCounts struct {
	Normal   uint64 // Normal
	Shutdown uint64 // Shutdown and ShutdownWith
	Killed   uint64 // Killed (an untrappable Kill)
	Panic    uint64 // a handler's panic
	Other    uint64 // any other reason
}

// Total is the sum of the classes.
func (e ExitCounts) Total() uint64 { return e.Normal + e.Shutdown + e.Killed + e.Panic + e.Other }

// Histogram is a snapshot of a duration histogram. Counts[i] is the number
// of observations up to Bounds[i] and above Bounds[i-1] (not cumulative);
// the last count, one past Bounds, is those above every bound.
type Histogram struct {
	Bounds []time.Duration
	Counts []uint64
	Count  uint64
	Sum    time.Duration
}

// histBounds are the upper bounds of the buckets but the last.
var histBounds = func() []time.Duration {
	b := make([]time.Duration, histBuckets-1)
	for i := range b {
		b[i] = time.Duration(1) << (histShift + i)
	}
	return b
}()

func (h *Histogram) add(x *hist) {
	if h.Counts == nil {
		h.Bounds = histBounds
		h.Counts = make([]uint64, histBuckets)
	}
	for i := range x.counts {
		h.Counts[i] += x.counts[i].Load()
	}
	h.Count += x.count.Load()
	h.Sum += time.Duration(x.sum.Load())
}

// SchedulerObservation is what Observation tells of one scheduler index.
type SchedulerObservation struct {
	ID int
	// Parked is the time the index's role spent parked idle since the
	// System started, its current park included: a counter.
	Parked time.Duration
	// Busy is the time since the System started that the index's role
	// was not parked idle (running activations, looking for work, or
	// handed to a spare while a handler blocked): a counter. Over a
	// window, utilisation is ΔBusy/Δwall. Two reads may see it go back by
	// up to one park that ended between the loads (design note).
	Busy time.Duration
}

// Observation is a snapshot of the observation counters. Like Stats, each
// field is read on its own.
type Observation struct {
	Exits ExitCounts
	// Held is the number of resources tied to actors with Hold: io's
	// sockets and listeners, and anything else a package holds.
	Held int
	// Handled is the number of messages taken by activations while
	// observing: a counter (of every activation, not a sample).
	Handled uint64
	// Handling is the time to handle one message, from sampled
	// activations while observing: an activation's wall time (blocking
	// included) over the messages it took, once per message.
	Handling Histogram
	// MailboxLatency is the time from a sampled Send to the end of the
	// activation that took the message from the mailbox, while observing.
	MailboxLatency Histogram
	Schedulers     []SchedulerObservation
}

// Observation returns the observation counters (see Observe for the ones
// that count only while observing).
func (sys *System) Observation() Observation {
	o := &sys.obs
	ob := Observation{Held: int(sys.ioCount.Load())}
	now := sys.tm.now()
	for i := range o.idx {
		x := &o.idx[i]
		ob.Exits.Normal += x.exits[exitNormal].Load()
		ob.Exits.Shutdown += x.exits[exitShutdown].Load()
		ob.Exits.Killed += x.exits[exitKilled].Load()
		ob.Exits.Panic += x.exits[exitPanic].Load()
		ob.Exits.Other += x.exits[exitOther].Load()
		ob.Handled += x.msgs.Load()
		ob.Handling.add(&x.handling)
		ob.MailboxLatency.add(&x.latency)
		if i < len(o.idx)-1 {
			parked := x.parked.Load()
			if since := x.parkSince.Load(); since != 0 && now > since {
				parked += now - since
			}
			ob.Schedulers = append(ob.Schedulers, SchedulerObservation{ID: i, Parked: time.Duration(parked), Busy: time.Duration(max(now-parked, 0))})
		}
	}
	return ob
}

// ActorStat is one actor's figures in a Scan: read without locks, each on
// its own (MailboxLen and Handled as System.Info's).
type ActorStat struct {
	Pid Pid
	// Slot is the actor's slot index: Scan's order, and a key that a
	// later Scan's actor of the same Pid shares.
	Slot       int
	State      string // as ActorInfo.State
	MailboxLen int
	Handled    uint64
	TrapExit   bool
	// Memory estimates the runtime's own bytes for the actor: its record,
	// its links-and-monitors record if it has one, and one node per queued
	// message. It leaves out the behaviour's own heap and the messages'
	// payloads, which only the garbage collector could size.
	Memory int
}

const (
	procBytes = int(unsafe.Sizeof(proc{}))
	coldBytes = int(unsafe.Sizeof(coldState{}))
	nodeBytes = 24 // a mailbox node: a link and an interface value
)

// ScanEnd is the cursor Scan returns when no slot is left.
const ScanEnd = -1

// Scan calls f with each live actor whose slot index is from or more, in
// index order, until f returns false or max actors were seen (max 0 or
// less: no limit); it returns the index to continue from, or ScanEnd.
// It takes no lock and allocates nothing: an actor spawned or dying
// meanwhile may or may not be seen. A System of 1M actors takes tens of
// milliseconds (docs/observability.md).
func (sys *System) Scan(from, limit int, f func(ActorStat) bool) (next int) {
	if from < 0 {
		from = 0
	}
	capacity := sys.slab.Cap()
	seen := 0
	for i := from; i < capacity; i++ {
		sl := sys.slab.At(uint32(i))
		if sl == nil {
			// A chunk never allocated: skip it whole.
			i |= slot.ChunkSize - 1
			continue
		}
		p := sl.Rec()
		if p == nil || p.exit.Load() != alive {
			continue
		}
		g, _, s := sl.Word.Snapshot()
		if g != p.pid.gen || s == slot.Done || s == slot.Vacant {
			continue
		}
		n := p.mbox.Len()
		if n < 0 {
			continue // closed: dead
		}
		st := ActorStat{Pid: p.pid, Slot: i, State: s.String(), MailboxLen: n, Handled: p.mbox.Taken(),
			TrapExit: p.flags.has(flagTrap), Memory: procBytes + n*nodeBytes}
		if p.cold.Load() != nil {
			st.Memory += coldBytes
		}
		if !f(st) {
			return i + 1
		}
		if seen++; limit > 0 && seen >= limit {
			if i+1 >= capacity {
				return ScanEnd
			}
			return i + 1
		}
	}
	return ScanEnd
}

// ActorDetail is what Detail tells of one actor beyond Info.
type ActorDetail struct {
	ActorInfo
	Memory int // as ActorStat.Memory
	// Links are the linked pids, at most maxDetail of them (Links in
	// ActorInfo is the whole count).
	Links []Pid
	// Timers are the time left on the SendAfter timers destined to the
	// actor, at most maxDetail of them.
	Timers []time.Duration
	// Resources describe what it holds (Hold): io's sockets as their type
	// and addresses, anything else as its type.
	Resources []string
}

const maxDetail = 100

// Detail describes pid at more length than Info: its links, the timers
// destined to it and the resources it holds (ErrNoProc if it is dead).
func (sys *System) Detail(pid Pid) (ActorDetail, error) {
	info, err := sys.Info(pid)
	if err != nil {
		return ActorDetail{}, err
	}
	p, err := sys.lookup(pid)
	if err != nil {
		return ActorDetail{}, err
	}
	d := ActorDetail{ActorInfo: info, Memory: procBytes + max(info.MailboxLen, 0)*nodeBytes}
	if cs := p.cold.Load(); cs != nil {
		d.Memory += coldBytes
		cs.node.AnyLink(func(pr peer) bool {
			if !pr.pid.IsZero() {
				d.Links = append(d.Links, pr.pid)
			}
			return len(d.Links) >= maxDetail
		})
		// Copied under the lock, described after it: a resource's String
		// may take its own lock, which must not nest inside ours.
		var held []io.Closer
		cs.mu.Lock()
		for h := range cs.held {
			if len(held) >= maxDetail {
				break
			}
			held = append(held, h.c)
		}
		cs.mu.Unlock()
		for _, c := range held {
			d.Resources = append(d.Resources, describeHeld(c))
		}
	}
	d.Timers = sys.tm.destTimers(sys, p)
	return d, nil
}

// describeHeld names a held resource: by its String if it has one (io's
// sockets: their addresses), else its type and its addresses if it has
// them.
func describeHeld(c any) string {
	if st, ok := c.(fmt.Stringer); ok {
		return st.String()
	}
	s := fmt.Sprintf("%T", c)
	if a, ok := c.(interface{ LocalAddr() net.Addr }); ok {
		if la := a.LocalAddr(); la != nil {
			s += " " + la.String()
		}
	}
	if a, ok := c.(interface{ RemoteAddr() net.Addr }); ok {
		if ra := a.RemoteAddr(); ra != nil {
			s += " -> " + ra.String()
		}
	}
	return s
}

// destTimers lists the time left on the SendAfter timers destined to p,
// at most maxDetail.
func (t *timerState) destTimers(sys *System, p *proc) []time.Duration {
	var out []time.Duration
	now := t.now()
	left := func(dl int64) time.Duration {
		return time.Duration(max((dl<<tickShift)-now, 0))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if dl, ok := t.wheel.Deadline(p.tmFirst()); ok {
		out = append(out, left(dl))
	}
	if l := t.more[p.pid.packed()]; l != nil {
		for _, h := range l.hs {
			if len(out) >= maxDetail {
				break
			}
			if dl, ok := t.wheel.Deadline(h); ok {
				out = append(out, left(dl))
			}
		}
	}
	return out
}

// PeekMailbox returns up to n of pid's queued messages, oldest first,
// each formatted as "Type: value" and cut to 200 bytes. The actor formats
// them itself, between two messages (a system-lane signal: it owns its
// mailbox and the messages' values), so an actor that is busy in a long
// handler or blocked answers only when that ends; PeekMailbox waits up to
// timeout and then fails with ErrTimeout. A panic in a message's String
// method is shown in its place, not raised in the actor. Errors: ErrNoProc,
// ErrBadPid, ErrTimeout.
func (sys *System) PeekMailbox(pid Pid, n int, timeout time.Duration) ([]string, error) {
	p, err := sys.lookup(pid)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	res := make(chan []string, 1)
	sys.signalProc(nil, p, func(c *Context) {
		var out []string
		add := func(v any) bool {
			out = append(out, formatPeek(v))
			return len(out) < n
		}
		if e := c.p.ext; e != nil {
			for _, v := range e.save {
				if !add(v) {
					break
				}
			}
		}
		if len(out) < n {
			c.p.mbox.Peek(n-len(out), add)
		}
		res <- out
	})
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case out := <-res:
		return out, nil
	case <-t.C:
		return nil, ErrTimeout
	}
}

func formatPeek(v any) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("%T: (String panicked: %v)", v, r)
		}
	}()
	s = fmt.Sprintf("%T: %v", v, v)
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// BlockedStack returns the stack of pid's handler if it is blocked (a
// Call, a Receive, a Sleep, Blocking) in a wait that began while stacks
// were observed (ObserveStacks), and false otherwise. It reads the goroutine
// profile, which stops the world for a moment: for a person looking at
// one actor, not for a loop.
func (sys *System) BlockedStack(pid Pid) (string, bool) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return "", false
	}
	want := fmt.Sprintf("%q:%q", blockedLabel, pidLabel(pid))
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var group []string
	found := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if found {
				break
			}
			group = group[:0]
			continue
		}
		if strings.HasPrefix(line, "# labels:") && strings.Contains(line, want) {
			found = true
			continue
		}
		if strings.HasPrefix(line, "#\t") || strings.HasPrefix(line, "# 0x") {
			// "#	pc	func+off	file:line": shown as a Go stack is.
			f := strings.Fields(strings.TrimPrefix(line, "#"))
			switch len(f) {
			case 3:
				group = append(group, f[1]+"\n\t"+f[2])
			case 2:
				group = append(group, f[1])
			}
		}
	}
	if !found {
		return "", false
	}
	return strings.Join(group, "\n"), true
}

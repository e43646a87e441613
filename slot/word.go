// Design note: the slot word.
//
// Problem. An actor is scheduled by whichever scheduler goroutine pops it,
// woken by any goroutine that sends to it, fires a timer at it or kills it,
// and its slot is recycled for a new tenant once it dies. All of that must
// agree on one question — "who owns this actor right now?" — without a lock
// on the send path, and a stale pid (one naming an earlier tenant) must never
// act on the slot's current tenant.
//
// Rejected. A mutex per slot plus a "pending wake" flag: every send takes the
// lock, and the flag has to be re-checked under the lock at park time, which
// is exactly the lost-wake-up window we want to close. Separate atomics for
// generation and state: a wake could read the generation, lose the CPU, and
// then transition the state of the next tenant.
//
// Protocol. One 64-bit word, generation:32 | epoch:24 | state:8, changed only
// by compare-and-swap of the whole word, so the generation check is atomic
// with every transition. The states are a closed enum (see State); each
// transition is a small named function below, and an impossible old state is
// a broken invariant that panics with the word printed.
//
//	Vacant   --Install-->   Queued            the allocator owns a vacant slot
//	Vacant   --InstallParked--> Parked        the same, for a tenant born idle
//	Queued   --Pop-->       Running           only a scheduler, paired with its pop
//	Running  --Yield-->     Queued            budget spent
//	Running  --ParkIdle-->  Parked            mailbox empty
//	Running  --ParkWait-->  Parked|Blocked    blocked in a handler on a wait
//	Running  --Wake(e)-->   Notified          a wake raced the activation
//	Notified --ParkIdle-->  Queued            the wake is kept: re-queue
//	Notified --ParkWait-->  Running           the wake is kept: re-check the wait
//	Notified --Yield-->     Queued
//	Parked   --Wake(e)|WakeMsg--> Queued      epoch must match for Wake
//	Blocked  --Wake(e)-->   Queued            epoch must match
//	Running|Notified --Finish--> Done
//	Done     --Reclaim-->   Vacant            generation+1: stale pids are inert
//
// Two refinements over the diagram in DESIGN.md. InstallParked lets a tenant
// with nothing to run be born idle (see its doc). And Parked versus Blocked:
// a Parked actor accepts any message as a wake-up (it is idle, or in a
// selective receive that must look at every new message), a Blocked one
// waits only for the registration that carries its epoch (a call reply, a
// sleep's timer) or for a kill. A plain Send therefore never wakes an actor
// blocked in a call just to find that the reply is not there yet.
//
// The epoch names the actor's current wait. BeginWait bumps it; every
// registration (timer, call reply, monitor of a callee) carries the epoch it
// was made under, and Wake with an old epoch is a no-op, so a losing select
// arm or a stale timeout can never wake a later wait. WakeAny (kill) ignores
// the epoch. Message wakes (WakeMsg) ignore it too: they are not
// registrations, they are the mailbox becoming non-empty.
//
// The hard part is the park window: the owner decides to park because its
// mailbox (or wait) looked empty, and a wake lands between that look and the
// park CAS. Epoch wakes resolve it through Notified: the wake finds Running
// and leaves Notified behind, and the park CAS fails over to re-queue or
// re-check. Message wakes resolve it Dekker-style (see actor/proc.go,
// "park protocol"): the sender publishes the message then loads the word;
// the owner publishes Parked then re-reads the mailbox. Go's atomics are
// sequentially consistent, so at least one of the two sees the other.

package slot

import (
	"fmt"
	"sync/atomic"
)

// State is the scheduling state of a slot. For each state the comment says
// who owns the slot (may touch the actor's private fields and consume its
// mailbox) and who may move it out of that state.
type State uint8

const (
	// Vacant: no tenant. Owned by the allocator that popped it from the free
	// list; only Install leaves it.
	Vacant State = iota
	// Queued: runnable, and its pid is in exactly one run queue (or runnext).
	// Nobody owns the actor; only the scheduler that pops the pid may Pop.
	Queued
	// Running: a scheduler (or the actor's own blocked goroutine resumed on a
	// scheduler role) owns the actor. Only the owner leaves Running, except
	// that a wake may move it to Notified.
	Running
	// Notified: Running, and a wake arrived during the activation. Still
	// owned; the owner's next ParkIdle re-queues instead of parking.
	Notified
	// Parked: no owner; woken by any message (WakeMsg), an epoch-matched
	// Wake, or WakeAny. The waker that moves it to Queued must push the pid.
	Parked
	// Blocked: no owner; a goroutine holds the actor's stack and waits for an
	// epoch-matched Wake or WakeAny. Messages do not wake it.
	Blocked
	// Done: the tenant has finished; the owner is releasing the slot. Only
	// Reclaim leaves it.
	Done
	numStates
)

var stateNames = [...]string{"vacant", "queued", "running", "notified", "parked", "blocked", "done"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// EpochBits is the width of the epoch field; epochs wrap modulo 1<<EpochBits.
const EpochBits = 24

const (
	epochMask = 1<<EpochBits - 1
	stateMask = 0xff
)

// Pack builds a word. Exported for tests and diagnostics only.
func Pack(gen uint32, epoch uint32, s State) uint64 {
	return uint64(gen)<<32 | uint64(epoch&epochMask)<<8 | uint64(s)
}

// Unpack splits a word into its fields.
func Unpack(w uint64) (gen uint32, epoch uint32, s State) {
	return uint32(w >> 32), uint32(w>>8) & epochMask, State(w & stateMask)
}

// NextGen is the generation that follows g. Generation 0 is never issued, so
// the zero Pid can never match a live slot.
func NextGen(g uint32) uint32 {
	g++
	if g == 0 {
		g = 1
	}
	return g
}

// Word is the packed scheduling word of one slot. The zero Word is Vacant
// with generation 0; Slab initialises words to generation 1. Every method is
// a single CAS loop on the whole word; none blocks.
type Word struct {
	v atomic.Uint64
}

// Load returns the raw word.
func (w *Word) Load() uint64 { return w.v.Load() }

// Snapshot returns the decoded fields.
func (w *Word) Snapshot() (gen, epoch uint32, s State) { return Unpack(w.v.Load()) }

// init sets the word of a never-used slot. Called before the slot is
// reachable by any other goroutine.
func (w *Word) init(gen uint32) { w.v.Store(Pack(gen, 0, Vacant)) }

func broken(op string, w uint64) {
	g, e, s := Unpack(w)
	panic(fmt.Sprintf("slot: broken invariant: %s from word gen=%d epoch=%d state=%v", op, g, e, s))
}

// Install moves Vacant -> Queued and returns the new tenant's generation. The
// caller owns the vacant slot (it popped it from the free list) and must have
// written the tenant's fields before calling: the CAS publishes them.
func (w *Word) Install() uint32 {
	// Release: the tenant's fields, written by the allocator, are visible to
	// whoever observes Queued (the scheduler that pops the pid).
	return w.install("Install", Queued)
}

// InstallParked moves Vacant -> Parked and returns the new tenant's
// generation: a tenant with nothing to run until its first message or
// signal (no Init) is born idle, never queued. As for Install, the caller
// owns the vacant slot and has written the tenant's fields; the CAS
// publishes them. A message or kill that reached the tenant's record
// before this CAS found the word Vacant and woke nobody: the caller must
// re-check after it, as an owner does after ParkIdle (actor/proc.go, the
// park protocol), and WakeMsg the word itself if anything arrived.
func (w *Word) InstallParked() uint32 { return w.install("InstallParked", Parked) }

// install moves Vacant -> to, keeping the generation, with epoch 0. Nobody
// else moves a Vacant word, so the CAS cannot fail.
func (w *Word) install(op string, to State) uint32 {
	old := w.v.Load()
	gen, _, s := Unpack(old)
	if s != Vacant {
		broken(op, old)
	}
	if !w.v.CompareAndSwap(old, Pack(gen, 0, to)) {
		broken(op+" (raced)", w.v.Load())
	}
	return gen
}

// Pop moves Queued -> Running. Only the scheduler that popped gen's pid from
// a run queue calls it; the at-most-once-queued invariant means the word must
// read exactly (gen, Queued). Returns false only for a word that is not of
// this generation, which is a broken invariant the caller reports.
func (w *Word) Pop(gen uint32) bool {
	// Acquire (pairs with the Release of whoever moved it to Queued): we
	// now own the actor.
	return w.shift(gen, Queued, Running)
}

// shift moves (gen, from) -> (gen, to), keeping the epoch. It reports false,
// changing nothing, if the word is not of generation gen in state from.
func (w *Word) shift(gen uint32, from, to State) bool {
	// Field arithmetic by hand, not Unpack/Pack: this is the hot path of
	// every message wake and every pop, and the compiler inlines it only
	// under its cost budget.
	want := uint64(gen)<<32 | uint64(from)
	for {
		old := w.v.Load()
		if old&^(epochMask<<8) != want {
			return false
		}
		if w.v.CompareAndSwap(old, old&^stateMask|uint64(to)) {
			return true
		}
	}
}

// Yield moves Running|Notified -> Queued: the owner spent its budget and will
// push the pid itself. A pending notification is absorbed: the actor runs
// again anyway.
func (w *Word) Yield(gen uint32) { w.leaveOwned("Yield", gen, Queued) }

// leaveOwned moves Running|Notified -> to, keeping the epoch. A pending
// notification is absorbed: every caller either runs the actor again
// (Queued) or ends it (Done).
func (w *Word) leaveOwned(op string, gen uint32, to State) {
	for {
		old := w.v.Load()
		g, e, s := Unpack(old)
		if g != gen || (s != Running && s != Notified) {
			broken(op, old)
		}
		// Release: our writes to the actor are visible to the next owner.
		if w.v.CompareAndSwap(old, Pack(g, e, to)) {
			return
		}
	}
}

// ParkIdle moves Running -> Parked (returns true: the owner gave up the
// actor), or Notified -> Queued (returns false: a wake raced the activation,
// the owner must push the pid and stops owning it).
func (w *Word) ParkIdle(gen uint32) (parked bool) {
	for {
		old := w.v.Load()
		g, e, s := Unpack(old)
		var next uint64
		switch {
		case g == gen && s == Running:
			next = Pack(g, e, Parked)
		case g == gen && s == Notified:
			next = Pack(g, e, Queued)
		default:
			broken("ParkIdle", old)
		}
		// Release: from here on another scheduler may own the actor.
		if w.v.CompareAndSwap(old, next) {
			return s == Running
		}
	}
}

// ParkWait parks the owner on its current wait: Running -> Parked when
// messages may satisfy the wait (selective receive), Running -> Blocked when
// only its registration may. It returns false, leaving the word Running, if a
// wake already arrived (Notified): the caller re-checks its wait.
func (w *Word) ParkWait(gen uint32, acceptMessages bool) (parked bool) {
	to := Blocked
	if acceptMessages {
		to = Parked
	}
	for {
		old := w.v.Load()
		g, e, s := Unpack(old)
		var next uint64
		switch {
		case g == gen && s == Running:
			next = Pack(g, e, to)
		case g == gen && s == Notified:
			next = Pack(g, e, Running)
		default:
			broken("ParkWait", old)
		}
		if w.v.CompareAndSwap(old, next) {
			return s == Running
		}
	}
}

// BeginWait opens a new wait for the owner: the epoch is bumped, which makes
// every registration of earlier waits stale, and a notification left over
// from an earlier wait is dropped (Notified -> Running). Returns the new
// epoch, which the caller stamps on the registrations of this wait.
func (w *Word) BeginWait(gen uint32) uint32 {
	for {
		old := w.v.Load()
		g, e, s := Unpack(old)
		if g != gen || (s != Running && s != Notified) {
			broken("BeginWait", old)
		}
		ne := (e + 1) & epochMask
		if w.v.CompareAndSwap(old, Pack(g, ne, Running)) {
			return ne
		}
	}
}

// Epoch returns the current epoch; meaningful to the owner.
func (w *Word) Epoch() uint32 {
	_, e, _ := Unpack(w.v.Load())
	return e
}

// WakeResult says what a wake did.
type WakeResult uint8

const (
	// Noop: stale generation or epoch, or nothing to do (already queued,
	// running a later wait, done).
	Noop WakeResult = iota
	// Enqueue: the waker moved the word to Queued and must push the pid.
	Enqueue
	// Noted: the actor was running; it will see the wake at its park.
	Noted
)

// Wake is the epoch-matched wake of a registration made under (gen, epoch):
// Parked|Blocked -> Queued, Running -> Notified. Any other state, or another
// generation or epoch, is a no-op.
func (w *Word) Wake(gen, epoch uint32) WakeResult {
	return w.wake(gen, epoch&epochMask, false)
}

// WakeAny is the wildcard wake used by kills: like Wake, but ignores the
// epoch.
func (w *Word) WakeAny(gen uint32) WakeResult {
	return w.wake(gen, 0, true)
}

func (w *Word) wake(gen, epoch uint32, any bool) WakeResult {
	for {
		old := w.v.Load()
		g, e, s := Unpack(old)
		if g != gen || (!any && e != epoch) {
			return Noop
		}
		var next uint64
		switch s {
		case Parked, Blocked:
			next = Pack(g, e, Queued)
		case Running:
			next = Pack(g, e, Notified)
		default:
			return Noop
		}
		if w.v.CompareAndSwap(old, next) {
			if s == Running {
				return Noted
			}
			// We moved it to Queued: the pid is ours to push.
			return Enqueue
		}
	}
}

// WakeMsg is the wake of a message send: Parked -> Queued whatever the
// epoch. It returns Enqueue if the caller must push the pid. A Running actor
// is not notified: it re-reads its mailbox after publishing Parked (the park
// protocol), so a message needs no notification.
func (w *Word) WakeMsg(gen uint32) WakeResult {
	if w.shift(gen, Parked, Queued) {
		return Enqueue
	}
	return Noop
}

// Finish moves Running|Notified -> Done: the owner is ending the tenancy.
func (w *Word) Finish(gen uint32) { w.leaveOwned("Finish", gen, Done) }

// Reclaim moves Done -> Vacant with the next generation and epoch 0. Every
// pid of the old tenant is inert from here on. Returns the new generation.
func (w *Word) Reclaim(gen uint32) uint32 {
	old := w.v.Load()
	g, _, s := Unpack(old)
	if g != gen || s != Done {
		broken("Reclaim", old)
	}
	ng := NextGen(g)
	// Nobody else moves a Done word, so this cannot fail.
	if !w.v.CompareAndSwap(old, Pack(ng, 0, Vacant)) {
		broken("Reclaim (raced)", w.v.Load())
	}
	return ng
}

// Live reports whether the word holds generation gen in a live state (not
// Vacant, not Done).
func Live(word uint64, gen uint32) bool {
	g, _, s := Unpack(word)
	return g == gen && s != Vacant && s != Done
}

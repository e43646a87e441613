package timers

// Design note: the timing wheel
//
// Problem. The runtime arms a timer for every send_after, every receive with
// an `after` clause and every call with a timeout; almost all of them are
// cancelled before they fire (the reply came in time). Arm and Cancel must
// therefore be O(1) and allocation-free, firing must never be early, and the
// scheduler that plays timekeeper (DESIGN.md §4) needs a cheap answer to "how
// long may I sleep?". The wheel is a pure data structure: no goroutine, no
// clock; the caller passes the time in and holds its own lock.
//
// Rejected approaches.
//   - A binary heap (Go's runtime timers): O(log n) arm and cancel, and a
//     cancelled timer either costs a sift or lingers as garbage until it
//     reaches the top. Most of our timers are cancelled, so that is the
//     common path, not the rare one.
//   - A flat hashed wheel (one level, deadline mod N): O(1), but every drain
//     of a slot scans the timers that are "a lap ahead", and there is no cheap
//     lower bound on the next expiry without scanning.
//   - Cascading whole slots eagerly (the classic Linux timer wheel): every
//     time a coarse slot comes round, all its timers move down at once, even
//     those that will be cancelled long before they are due, and the cascade
//     is a latency spike at each coarse boundary.
//   - A wheel with a bounded range plus clamping of far deadlines into the
//     top slot: it needs a re-arm path that can bounce a timer back into the
//     slot being drained. Eleven 6-bit levels cover the whole 64-bit clock, so
//     there is no "beyond the range" and no clamp at all; the extra levels
//     cost nothing while empty (the level mask skips them).
//
// The protocol: digit levels and refine-on-drain (Varghese & Lauck,
// "Hashed and Hierarchical Timing Wheels", SOSP '87, in the bitmap form used
// by tokio's timer).
//
// Time is an unsigned 64-bit tick count (the unit is the caller's) read as
// eleven base-64 digits; digit L selects a slot at level L. (The caller's
// int64 is mapped to uint64 by flipping the sign bit, which keeps the order,
// so negative clocks work.) A timer with deadline d > cur is placed at
//
//	level L = index of the most significant 6-bit digit in which d and cur differ
//	slot  s = digit L of d
//
// THE INVARIANT, for every timer in level L, slot s:
//
//	d agrees with cur on every digit above L, and digit L of d is s > digit L of cur.
//
// Consequences, which are what make the structure cheap:
//   - every timer at level L is later than every timer at a level below L
//     (they lie in a later 64^L-block of the same 64^(L+1)-block), and within
//     a level, slot order is deadline order. The earliest timer is therefore
//     in the lowest non-empty level, in its lowest occupied slot: two
//     count-trailing-zeros on the bitmaps find it (NextExpiry), with no
//     wrap-around because occupied slots are always strictly ahead of cur;
//   - the start of that slot, cur with digits 0..L replaced by (s, 0, ..., 0),
//     is a lower bound on the earliest deadline, exact at level 0 (a level-0
//     slot is one tick).
//
// Deadlines that are not after cur ("overdue": zero or negative durations, or
// the past) go to a separate due list and fire, in arm order, at the next
// Advance.
//
// Advance(now) repeatedly takes the earliest occupied slot (L, s). If its
// start S is after now it stops; otherwise it moves cur to S and sifts the
// slot: timers with d == S go to the draining list, any other (d > S) is
// re-inserted relative to the new cur, which puts it at a strictly lower
// level because d and S now agree on digit L; then the draining list fires. That is refine-on-drain: a timer moves down at most once
// per level in its life, and only when its coarse slot actually comes due, so
// a timer cancelled early never moves at all. Finally cur = now.
//
// Why the invariant survives moving cur. We only ever move cur to S (the
// minimum slot start) or to a now < S' for the next slot start S'. For any
// remaining timer, its slot start lies at or after that point, in the same
// higher-level block as the old cur, so the new cur is in that block too and
// its digit at the timer's level is still smaller. That argument is the hard
// part; CheckInvariants (export_test.go) verifies it after every step of the
// property test.
//
// Order. Because Advance visits slots in start order and fires only at d == S,
// timers fire in deadline order, ties in arm order: a later-armed timer with
// the same deadline can only land in the same slot list as an earlier one
// (the earlier one cannot be at a finer level, as its level only shrinks as
// cur approaches d), or, if Refine has moved the earlier one ahead, in slot
// (L, s), which the crossing sifts behind it; and lists are FIFO. The price is that a timer reached by
// a big clock jump is refined through the levels instead of fired straight
// from its coarse slot: at most eleven moves, and only after a stall.
//
// Cost. Arm and Cancel touch the node, its list neighbours and one bitmap
// word. A timer moves down at most once per level, so Advance is O(levels)
// per timer fired, amortised; but, left to Advance, the moves happen when a
// coarse slot comes due, all at once: the Advance that crosses a level-L
// boundary refines every timer in that slot. With 1M timers spread over
// 10 s, one level-2 slot holds ~400k of them and that Advance takes tens of
// milliseconds (measured in bench_test.go); with 100k timers over 1 s, a
// level-2 slot at the runtime's 65.5 us tick (268 ms) holds ~27k, and the
// crossing held every timer in the runtime back 2-4 ms, three times a
// second (docs/benchmarks.md, timers). Hence Refine.
//
// Refining ahead. Refine moves the timers of the next coarse slot (level
// L >= 2, start S) to the slots they will occupy once cur = S, before S, in
// small paced steps, so the crossing has (almost) nothing left to do. Those
// slots cannot be the live ones: relative to the present cur, the timers
// still belong in slot (L, s). So the levels come in two banks; for each
// level one bank is live (bit L of bank) and the other is idle, and Refine
// places timers, relative to S, into the idle banks of the levels below L,
// or on ahead list L if they are due exactly at S. Crossing S (cross, from
// Advance) swaps the banks of the levels below L: their live banks are
// empty then, because every timer in them is due before S and has fired,
// so the swap is O(1). Then what is left in slot (L, s) (armed since Refine
// emptied it, or not yet moved) is sifted like any slot, behind the refined
// timers of equal deadline, as its later arm order demands; only then does
// the ahead list fire, in arm order. Nothing observable changes: NextExpiry
// counts S as the earliest slot start while refined timers are pending, and
// a timer refined ahead is cancelled, read or fired as any other.
//
// Targets. Such a slot is a target of Refine (bit L of tgt, pre[L]), chosen
// once the clock is in its run-up (Pacing). An earlier coarse slot may be
// occupied after that, by an Arm or by Advance sifting a coarser slot, and
// would then be crossed first, in one go: so Refine always works on the
// slot crossed next, and makes that slot a target too once its run-up has
// begun (retarget; a Refine that stayed on its target would let the
// earlier slot be crossed unrefined). Its level L' is below L (the
// clock is in the level-L slot just before S, so every live slot of level
// L or above starts at or after S), and its timers need the idle banks
// below L'. What the old target put there goes back to the front of its
// source slot, in paced steps (moveBack, the back levels), before Refine
// starts on the new one; the old target keeps the rest, levels L' to L-1,
// suspended until it is the slot crossed next again. Targets nest this
// way, one a level at most, their starts increasing with their levels.
// Each idle level belongs to one target, its band: a back level to backTo,
// any other to the lowest target above it. THE INVARIANT holds for the
// live banks relative to cur and for each idle bank relative to the start
// of the target whose band it is in. The lowest target is crossed first,
// once nothing is moving back (Advance finishes that if Refine was not
// called as asked); its band is then every idle level below it, so the
// swap at its crossing is the one above, and the other targets' bands are
// untouched. A target whose timers are all cancelled is dropped
// (dropEmptied). An Arm that fills a coarse slot to aheadReport timers
// reports when Refine can start on it (NextRefine): its run-up, or, if
// another slot or a target is crossed first, the later of that and the
// crossing; so a caller that sleeps until Refine's answer wakes for it.
//
// Pacing. The run-up is the last eight slots of the level below before S; a
// step moves a budget of timers and schedules the next step so that the
// rest spread evenly over the run-up, ending one slot of the level below
// before S. Unpaced, a runtime that calls Refine at every poll spent most
// of its time in the run-up moving timers in place of running actors, and
// the timers due meanwhile were late instead (the same 2-4 ms, moved).
// Moving back (Targets) goes in steps of the budget too, each due at once:
// in one go, 100k timers took 3-7 ms, as long as the crossing it avoids.
//
// Storage. Nodes live in fixed chunks of 1024 that never move, found by
// index (chunk = i>>10); only the small table of chunk pointers grows. The
// first version kept one slice grown by append: each doubling copied every
// node under the caller's lock, and at 100k pending timers (88-byte nodes in
// the runtime) that copy plus the zeroing of the new array stalled every
// timer for 2-4 ms, five times during a spawn burst (docs/benchmarks.md,
// timers). A chunk costs one extra indirection per node access.
//
// Staleness (STYLE.md rule 5). Nodes live in the chunks and are recycled
// through a free list, so a Handle could outlive its node. Each Arm takes a
// fresh 64-bit sequence number from the wheel; the node keeps it while it is
// pending and drops it to zero when freed. A Handle is (index, seq) and
// matches only while the node still holds that seq: cancelling twice, after
// the timer fired, or after the node was reused, is a clean false. A 64-bit
// sequence does not wrap in practice (585 years at 10^9 arms a second).
//
// Re-entrancy. fire may call Arm, Cancel, Deadline, Len, NextExpiry and Now (a
// periodic timer re-arms itself from fire). A slot whose start the clock
// reaches is emptied completely before anything in it fires: the timers due
// then go to the draining list, the rest to lower levels. So when fire runs
// every pending timer is on a list THE INVARIANT allows, a timer armed from
// fire lands behind every pending timer of equal deadline (ties fire in arm
// order, armed-from-fire included), and a panic in fire leaves only the
// draining list to tidy (advanceDone). Every node is unlinked and freed
// before its value is passed to fire. Advance, Refine and Clear may not be
// called from fire.

import (
	"math"
	"math/bits"
)

const (
	slotBits  = 6
	numSlots  = 1 << slotBits // slots per level
	slotMask  = numSlots - 1
	numLevels = (64 + slotBits - 1) / slotBits // 11: covers every uint64 distance

	// List ids: a slot list is bank*bankLists + level*numSlots + slot (two
	// banks of levels, see Refining ahead); then three special lists.
	bankLists    = numLevels * numSlots
	listDue      = 2 * bankLists // overdue timers, fire at the next Advance
	listDraining = listDue + 1   // the due list detached by a running Advance
	listAhead    = listDue + 2   // listAhead+L: refined ahead, due exactly at pre[L].start
	numLists     = listAhead + numLevels
	aheadLevel   = 2              // the lowest level whose slots Refine works on
	aheadSlots   = 8              // Refine starts this many slots of the level below ahead of the start
	aheadReport  = 64             // Arm reports a coarse slot it fills to this many timers (NextRefine)
	listFree     = math.MaxUint16 // node is on the free list

	// Node storage: chunks of chunkSize nodes (see Storage in the design note).
	chunkBits = 10
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1

	signBit = 1 << 63
)

// node is one timer. Nodes live in Wheel.chunks (see Storage) and are linked
// by index; index 0 is never a timer, so 0 means "none" in prev, next and
// the list heads. Every field is guarded by the caller's lock, like the
// whole Wheel.
type node[T any] struct {
	when uint64 // deadline, sign-flipped (see toTick)
	seq  uint64 // arm sequence number while pending; 0 while free
	prev int32  // previous node on the same list, or 0
	next int32  // next node on the same list (or on the free list), or 0
	list uint16 // list id, or listFree
	val  T
}

type listHead struct{ first, last, n int32 } // n: nodes on the list

// Wheel is a hierarchical timing wheel holding timers that carry a value of
// type T. See the package documentation for the contract.
//
// The zero Wheel is an empty wheel whose clock reads math.MinInt64; New sets
// the clock. A Wheel must not be copied after first use. It is not safe for
// concurrent use.
type Wheel[T any] struct {
	cur    uint64                // the wheel's clock, sign-flipped; only increases
	seq    uint64                // last sequence number handed out by Arm
	n      int                   // pending timers
	dueMin uint64                // lower bound on the due list's deadlines while it is non-empty
	hint   uint64                // NextRefine, or 0 for none (a run-up start is never 0: see armedCoarse)
	levels [2]uint16             // bit L of levels[b] set iff occ[b][L] != 0
	bank   uint16                // bit L set iff bank 1 is the live one at level L
	tgt    uint16                // bit L set iff pre[L] is a target of Refine (see Targets)
	back   uint16                // idle levels whose timers belong to target backTo, moving back (see Targets)
	backTo uint8                 // the target the back levels belong to, while back != 0
	busy   bool                  // an Advance is running
	free   int32                 // head of the free node list, or 0
	occ    [2][numLevels]uint64  // bit s of occ[b][L] set iff slot (L, s) of bank b is non-empty
	pre    [numLevels]ahead      // the coarse slots being refined ahead, by level; zero unless in tgt
	heads  [numLists]listHead    // slot lists, the due, draining and ahead lists
	chunks []*[chunkSize]node[T] // node i is chunks[i>>chunkBits][i&chunkMask]; see Storage
	nnodes int32                 // nodes handed out so far, the placeholder 0 included
}

// ahead describes a target of Refine: a coarse slot being refined ahead of
// its start. Its level L (>= aheadLevel) is its index in Wheel.pre.
type ahead struct {
	src   uint16 // its list id (live bank)
	start uint64 // its start, S; > cur
	next  uint64 // when the next step is due (pacing)
}

// Handle names one armed timer. The zero Handle names no timer. Handles are
// comparable and may be copied freely; they are meaningful only to the Wheel
// that issued them.
type Handle struct {
	seq uint64
	idx int32
}

// Split returns the parts of h, for callers that store many handles and
// want to save the struct's padding; Join puts them back together.
func (h Handle) Split() (idx int32, seq uint64) { return h.idx, h.seq }

// Join is the Handle whose parts Split returned.
func Join(idx int32, seq uint64) Handle { return Handle{seq: seq, idx: idx} }

// New returns an empty wheel whose clock reads now (ticks, any epoch).
func New[T any](now int64) *Wheel[T] {
	return &Wheel[T]{cur: toTick(now)}
}

// toTick maps an int64 time to the wheel's unsigned clock, preserving order.
func toTick(t int64) uint64 { return uint64(t) ^ signBit }

// fromTick is the inverse of toTick.
func fromTick(u uint64) int64 { return int64(u ^ signBit) }

// Len returns the number of pending timers: armed, neither fired nor cancelled.
func (w *Wheel[T]) Len() int { return w.n }

// Now returns the wheel's clock: the largest time passed to New or Advance.
func (w *Wheel[T]) Now() int64 { return fromTick(w.cur) }

// Arm adds a timer that fires with value v once the clock reaches deadline
// (ticks, the same epoch as the clock). A deadline at or before Now
// fires at the next Advance. Arm is O(1) and does not allocate once the wheel
// has grown to its high-water mark of pending timers.
func (w *Wheel[T]) Arm(deadline int64, v T) Handle {
	i := w.alloc()
	w.seq++
	n := w.at(i)
	n.when = toTick(deadline)
	n.seq = w.seq
	n.val = v
	w.insert(i, n)
	w.n++
	if w.heads[n.list].n == aheadReport { // rare: see armedCoarse
		w.armedCoarse(n.list)
	}
	return Handle{seq: w.seq, idx: i}
}

// armedCoarse is Arm's slow path: it has just filled list to aheadReport
// timers. If that is a slot of level 2 or above, Refine must be called by
// the time it can start on the slot, and its last answer may not say so:
// NextRefine reports that time. If the slot is the next to be crossed,
// ahead of every target, that is its run-up (at once, if that has begun).
// If another coarse slot or a target is crossed first, Refine starts on
// this one once that is crossed (it works on the slot crossed next only),
// so the time is the later of the run-up and that crossing. Such a slot is
// reported although Refine's last answer covered the one before it: that
// one may be new too (armed since that answer, with fewer than 64 timers,
// so not reported itself), or the caller may have dropped the answer (the
// runtime resets its wake-up when the last pending timer is cancelled,
// leaving an emptied target behind), and a caller that lowered its wake-up
// only to the deadlines would sleep until the first of them, past the
// run-up, and cross the filled slot all but unrefined. A target's own source slot, filled
// again after Refine emptied it, is not reported: Refine moves what was
// armed there at its next call, or the crossing sifts it, as before
// Refine (reporting it would wake the caller at once, each time an Arm
// brought it back to 64, for a step that pacing may not allow yet).
//
// Only a slot that fills up is reported. Fewer timers cost less to sift
// at the crossing than to wake a caller for, and reporting each slot an
// Arm occupied took an unpredictable branch and this slow path on every
// Arm of a call that arms and cancels one timer (18 to 27 ns an Arm and
// Cancel, BenchmarkArmCancelSmall). The time reported is never 0, which
// hint uses for "none": start is a multiple of 64^l above cur >= 0, so
// start - 8*64^(l-1) >= 56*64^(l-1), and the start of a slot or target
// crossed first is above cur.
func (w *Wheel[T]) armedCoarse(list uint16) {
	if list >= listDue {
		return // the due list
	}
	l, s := uint(list%bankLists)/numSlots, uint(list%numSlots)
	if l < aheadLevel || w.tgt&(1<<l) != 0 && w.pre[l].src == list {
		return // not coarse, or a target's source slot
	}
	shift := l * slotBits
	start := w.cur&^(uint64(1)<<(shift+slotBits)-1) | uint64(s)<<shift
	at := start - aheadSlots<<(shift-slotBits) // the run-up
	first := start                             // the start of the slot or target crossed first
	if _, _, f, ok := w.nextCoarse(); ok {
		first = min(first, f)
	}
	if w.tgt != 0 {
		first = min(first, w.pre[bits.TrailingZeros16(w.tgt)].start)
	}
	if first < start {
		at = max(at, first)
	}
	if w.hint == 0 || at < w.hint {
		w.hint = at
	}
}

// NextRefine returns when Refine must be called because of timers armed
// since Refine was last called: the earliest time at which Refine can
// start on a coarse slot (level 2 and up) that such Arms filled to 64
// timers, that is the start of the slot's run-up (at or before Now if it
// has begun) or, if another coarse slot is crossed first, the later of
// that and the start of the first; math.MaxInt64 if there is none. A slot
// with fewer timers is cheap to cross in one go; a slot that Refine is
// working on, filled again, is left to Refine's next call. O(1): it reads
// a field that Arm sets, only when it fills a slot to 64.
//
// A caller that sleeps until the earlier of NextExpiry and Refine's answer
// lowers that time, after each Arm, to the earlier of the deadline and
// NextRefine; otherwise it may sleep past a new slot's run-up and the slot
// is crossed in one go.
func (w *Wheel[T]) NextRefine() int64 {
	if w.hint == 0 {
		return math.MaxInt64
	}
	return fromTick(w.hint)
}

// Cancel stops the timer named by h and reports whether it was pending. It
// returns false, and changes nothing, if the timer already fired (including
// from within the fire callback that is delivering it), was already
// cancelled, or h is the zero Handle.
func (w *Wheel[T]) Cancel(h Handle) bool {
	n := w.lookup(h)
	if n == nil {
		return false
	}
	w.unlink(h.idx, n)
	w.release(h.idx, n)
	w.n--
	return true
}

// Clear drops every pending timer without firing it, as if each were
// cancelled: Len becomes 0, the clock stays, and every Handle issued so far
// names no timer from now on (a new timer never reuses one). Clear may not
// be called from fire.
func (w *Wheel[T]) Clear() {
	if w.busy {
		panic("timers: Clear called from within a fire callback")
	}
	*w = Wheel[T]{cur: w.cur, seq: w.seq}
}

// Deadline reports the deadline of the timer named by h and whether it is
// still pending. An overdue timer (deadline at or before Now, not yet fired
// by an Advance) is pending. For Erlang's read_timer, the time left is
// max(0, deadline-now).
func (w *Wheel[T]) Deadline(h Handle) (int64, bool) {
	n := w.lookup(h)
	if n == nil {
		return 0, false
	}
	return fromTick(n.when), true
}

// NextExpiry returns a lower bound on the earliest pending deadline, and
// false if no timer is pending. The bound is never later than that deadline,
// so sleeping until it and then calling Advance never fires late, only
// possibly wakes early. Precisely: if some timer is overdue, the bound is at
// or before Now; otherwise the earliest deadline d is after Now and the
// bound is d rounded down to a multiple of 64^L, where L is the most
// significant base-64 digit in which d and Now differ. In particular it is
// exactly d when d and Now lie in the same aligned 64-tick block. Two bitmap
// scans; O(1).
func (w *Wheel[T]) NextExpiry() (int64, bool) {
	if w.heads[listDue].first != 0 {
		return fromTick(w.dueMin), true
	}
	start, ok := w.nextSlot()
	if s, pending := w.aheadStart(); pending && (!ok || s < start) {
		return fromTick(s), true // what Refine moved ahead starts there
	}
	return fromTick(start), ok
}

// Advance moves the clock to now and calls fire, synchronously, with the
// value of every pending timer whose deadline is at or before now, exactly
// once each, and with no other. A now earlier than Now is treated as Now:
// the clock never goes back.
//
// Order: first the timers that were overdue when armed, in arm order; then
// the rest in deadline order, timers with equal deadlines in arm order.
//
// fire may call Arm, Cancel, Deadline, NextExpiry, Len and Now, but not
// Advance. A timer is no longer pending when fire receives its value. A
// timer armed from fire with a deadline at or before now fires either in
// this call (if its deadline is after the clock at that moment: the deadline
// being fired, or Now for an overdue one) or at the next
// Advance; never early; and after every pending timer of equal deadline. If
// fire panics, the panic propagates and the wheel stays consistent: the
// timer being fired counts as fired, the rest stay pending, and those that
// were due fire at the next Advance, ahead of timers armed from fire (the
// deadline-order promise may then not hold between them).
func (w *Wheel[T]) Advance(now int64, fire func(T)) {
	if w.busy {
		panic("timers: Advance called from within its fire callback")
	}
	if fire == nil {
		panic("timers: Advance called with a nil fire func")
	}
	to := toTick(now)
	if to < w.cur {
		to = w.cur
	}
	w.busy = true
	defer w.advanceDone()

	// Step 1: the overdue timers. Detach the due list first, so that a
	// callback that re-arms an overdue timer each time cannot keep us here.
	w.fireAll(listDue, fire)

	// Step 2: drain slots in start order up to now. Timers in slot (L, s)
	// have deadlines in [S, S+64^L); once cur == S none can enter it (a
	// deadline of S is overdue, a later one in its range lands at a lower
	// level), so emptying it terminates.
	for {
		start, ok := w.nextSlot()
		if w.tgt != 0 { // the lowest target starts before every other one
			a := uint(bits.TrailingZeros16(w.tgt))
			if s := w.pre[a].start; !ok || s <= start {
				if s > to {
					break
				}
				if w.back != 0 {
					// Refine asked to be called at once and was not:
					// the crossing swaps the banks below a.
					w.moveBack(math.MaxInt)
				}
				w.cross(a, fire)
				continue
			}
		}
		if !ok || start > to {
			break
		}
		w.cur = start
		live := w.liveLevels()
		l := uint(bits.TrailingZeros16(live))
		b := w.bankOf(l)
		list := uint16(b*bankLists+l*numSlots) + uint16(bits.TrailingZeros64(w.occ[b][l]))
		w.sift(list, listDraining)
		w.fireDraining(fire)
	}

	// Step 3: the remaining timers all start after to; the invariant holds
	// for cur = to (see "Why the invariant survives moving cur").
	w.cur = to
}

// advanceDone ends an Advance, normally or by a panic in fire. After a
// panic, timers still on the draining list (due, not yet fired) go back to
// the front of the due list, ahead of any armed since, keeping arm order;
// everything else is already where THE INVARIANT puts it (see
// Re-entrancy).
func (w *Wheel[T]) advanceDone() {
	w.busy = false
	d := w.heads[listDraining]
	if d.first == 0 {
		return
	}
	w.heads[listDraining] = listHead{}
	min := uint64(math.MaxUint64)
	for i := d.first; i != 0; i = w.at(i).next {
		w.at(i).list = listDue
		min = minU(min, w.at(i).when)
	}
	if due := w.heads[listDue]; due.first != 0 {
		w.at(d.last).next = due.first
		w.at(due.first).prev = d.last
		d.last = due.last
		d.n += due.n
		min = minU(min, w.dueMin)
	}
	w.heads[listDue] = d
	w.dueMin = min
}

// Refine does ahead of time, in paced steps of at most budget timers, the
// work that Advance would otherwise do all at once when the clock reaches
// the start of the next occupied slot of level 2 or above: moving each of
// its timers to the finer slot it will occupy then (see "Refining ahead" in
// the package documentation). It changes nothing that can be observed: what
// fires, when and in which order, Len, Deadline and NextExpiry stay as they
// were.
//
// The work starts once the clock is within eight slots of the level below
// of the slot's start, and is paced to end one such slot before it: each
// step moves budget timers (fewer at the end) and sets the time of the next
// step so that the rest are spread evenly over what is left of the run-up;
// called before that time, Refine moves nothing. Refine(0) never moves
// anything: it only tells when to call.
//
// Refine works on the slot that Advance will cross next. If an Arm (or an
// Advance) has since occupied a coarse slot that is crossed before the one
// Refine was working on, Refine switches to it once its run-up has begun,
// and comes back to the other after it is crossed.
//
// It returns when to call it next: the time of the next step (at or before
// Now if one is due, or the run-up is over and the rest is urgent), the
// start of the next run-up if none has begun, or math.MaxInt64 if there is
// nothing to do until Advance crosses a slot start. A caller that sleeps
// until min(NextExpiry, Refine), lowered after each Arm as NextRefine
// says, and calls Advance and then Refine each time it wakes does the work
// in small steps before each coarse slot instead of stalling at its start.
// Refine may not be called from fire.
func (w *Wheel[T]) Refine(budget int) int64 {
	if w.busy {
		panic("timers: Refine called from within a fire callback")
	}
	w.hint = 0 // the answer covers every slot Arm reported
	w.dropEmptied()
	if w.back != 0 && w.tgt&(1<<w.backTo-1) == 0 {
		w.back = 0 // backTo is the lowest target again: its band, as it was
	}

	// Step 1: the slot crossed next. That is the lowest target, unless an
	// earlier coarse slot was occupied since it was chosen (an Arm, or
	// Advance sifting a coarser slot): that one becomes the lowest target
	// once its run-up has begun (retarget), and until then nothing is
	// worth moving, as what the old target moved below its level would
	// have to be moved back.
	a := uint(bits.TrailingZeros16(w.tgt)) // 16 if there is no target
	if l, list, start, ok := w.nextCoarse(); ok && (a >= numLevels || start < w.pre[a].start) {
		if open := start - aheadSlots<<((l-1)*slotBits); w.cur < open {
			return fromTick(open)
		}
		w.retarget(l, list, start)
		a = l
	}
	if a >= numLevels {
		return math.MaxInt64
	}
	if w.back != 0 { // the lowest target waits until its band is free
		if budget > 0 {
			w.moveBack(budget)
		}
		return fromTick(w.cur) // then the lowest target's steps, at once
	}

	// Step 2: a paced step on target a.
	p := &w.pre[a]
	src := &w.heads[p.src]
	if src.n == 0 {
		return math.MaxInt64
	}
	if w.cur < p.next || budget <= 0 {
		return fromTick(max(p.next, w.cur))
	}
	k := min(budget, int(src.n))
	for range k {
		i := src.first
		n := w.at(i)
		w.unlink(i, n)
		w.insertAhead(i, n, a)
	}
	if src.n == 0 {
		return math.MaxInt64
	}
	// Pace: the src.n left get the same share of the run-up as the k just
	// moved, so the next step is due k/(k+left) of the way to the end.
	end := p.start - uint64(1)<<((a-1)*slotBits)
	p.next = w.cur
	if w.cur < end {
		hi, lo := bits.Mul64(end-w.cur, uint64(k))
		q, _ := bits.Div64(hi, lo, uint64(k)+uint64(src.n)) // q <= end-cur: no overflow
		p.next += q
	}
	return fromTick(p.next)
}

// nextCoarse returns the earliest occupied live slot of level aheadLevel
// or above: its level, list and start.
func (w *Wheel[T]) nextCoarse() (l uint, list uint16, start uint64, ok bool) {
	coarse := w.liveLevels() &^ (1<<aheadLevel - 1)
	if coarse == 0 {
		return 0, 0, 0, false
	}
	l = uint(bits.TrailingZeros16(coarse))
	b := w.bankOf(l)
	s := uint(bits.TrailingZeros64(w.occ[b][l]))
	shift := l * slotBits
	start = w.cur&^(uint64(1)<<(shift+slotBits)-1) | uint64(s)<<shift
	return l, uint16(b*bankLists + l*numSlots + s), start, true
}

// dropEmptied forgets the targets whose timers were all cancelled: nothing
// in the source slot, on the ahead list or in the band. So Refine moves on
// to the next coarse slot instead of idling until an emptied one is
// crossed, and a later slot of the same level can become a target. A
// target's band, empty, passes to the next target up.
func (w *Wheel[T]) dropEmptied() {
	idle := w.idleLevels()
	w.back &= idle // levels emptied by Cancel need no moving back
	for t := w.tgt; t != 0; t &= t - 1 {
		l := uint(bits.TrailingZeros16(t))
		if idle&w.band(l) == 0 && w.heads[w.pre[l].src].first == 0 && w.heads[listAhead+l].first == 0 {
			w.tgt &^= 1 << l
			w.pre[l] = ahead{}
		}
	}
}

// retarget makes the coarse slot (l, list), starting at start, the lowest
// target. The lowest target so far, a, if any, starts later, and l < a:
// cur is in a's run-up, so in the level-a slot just before a's, and every
// live slot of level a or above starts at or after a's start. The new
// target's timers go to the idle banks of the levels below l, which are in
// a's band; what a moved there must go back to the front of a's source
// slot first: those levels become back, still a's, and Refine moves them
// in steps of its budget (moveBack; in one go, it was as slow as the
// crossing it avoids) before it starts on the new target. a keeps the rest
// of its band (levels l to a-1) and its ahead list: it is suspended, not
// abandoned, and Refine resumes it once it is again the slot crossed next.
//
// If back is already set, to another target, the targets below that one
// have moved nothing yet (no target moves anything while back is set), so
// the new target's levels hold nothing but back's: nothing to add.
func (w *Wheel[T]) retarget(l uint, list uint16, start uint64) {
	if w.tgt != 0 && w.back == 0 {
		if occ := w.idleLevels() & (1<<l - 1); occ != 0 {
			w.back, w.backTo = occ, uint8(bits.TrailingZeros16(w.tgt))
		}
	}
	w.tgt |= 1 << l
	w.pre[l] = ahead{src: list, start: start}
}

// moveBack moves up to k timers (all, for k = math.MaxInt) from the back
// levels to the front of target backTo's source slot, and clears back once
// they are empty. It takes them from the end of a list and puts them in
// front of those it moved before, so each list arrives whole and in order,
// over as many calls as it takes. Ties stay in arm order: Refine moved
// timers from the front of the source slot, so each deadline's timers
// moved ahead are on one list, in arm order, and were armed before any of
// equal deadline still in the source slot or armed there since; lists of
// different deadlines may arrive in any order, as the crossing (or Refine,
// once backTo resumes) sorts them by deadline. One store per timer, O(1)
// per list.
func (w *Wheel[T]) moveBack(k int) {
	src := w.pre[w.backTo].src
	sh := &w.heads[src]
	for k > 0 && w.back != 0 {
		m := uint(bits.TrailingZeros16(w.back))
		b := w.bankOf(m) ^ 1
		if w.occ[b][m] == 0 {
			w.back &^= 1 << m // moved, or cancelled
			continue
		}
		list := uint16(b*bankLists+m*numSlots) + uint16(bits.TrailingZeros64(w.occ[b][m]))
		h := &w.heads[list]
		// Detach up to k timers from the end of the list: first..last.
		last, first, n := h.last, h.last, int32(1)
		w.at(first).list = src
		for int(n) < k && w.at(first).prev != 0 {
			first = w.at(first).prev
			w.at(first).list = src
			n++
		}
		if p := w.at(first).prev; p != 0 {
			w.at(p).next = 0
			w.at(first).prev = 0
			h.last = p
			h.n -= n
		} else {
			*h = listHead{}
			w.occ[b][m] &^= 1 << (list % numSlots)
			if w.occ[b][m] == 0 {
				w.levels[b] &^= 1 << m
			}
		}
		// Put them in front of the source slot.
		if sh.first != 0 {
			w.at(last).next = sh.first
			w.at(sh.first).prev = last
		} else { // Refine had emptied it: occupied again
			sh.last = last
			sb, r := src/bankLists, src%bankLists
			w.occ[sb][r/numSlots] |= 1 << (r % numSlots)
			w.levels[sb] |= 1 << (r / numSlots)
		}
		sh.first = first
		sh.n += n
		k -= int(n)
	}
}

// band is the mask of the idle levels that belong to target l: the back
// levels if l is backTo; otherwise, those below l and not back, down to the
// next target below l.
func (w *Wheel[T]) band(l uint) uint16 {
	m := uint16(1)<<l - 1
	if below := w.tgt & m; below != 0 {
		m &^= uint16(1)<<(bits.Len16(below)-1) - 1
	}
	m &^= w.back
	if w.back != 0 && uint(w.backTo) == l {
		m |= w.back
	}
	return m
}

// insertAhead links node i, taken from the source slot of target a, where
// insert will want it once cur = pre[a].start: on a's ahead list if due
// exactly then, else in the idle bank of the level below a it then belongs
// to (a is the lowest target, so those idle levels are its band).
func (w *Wheel[T]) insertAhead(i int32, n *node[T], a uint) {
	start := w.pre[a].start
	if n.when == start {
		w.link(i, n, listAhead+uint16(a))
		return
	}
	l := levelOf(n.when, start) // < a: n.when is in the slot's range
	w.link(i, n, w.occupy(w.bankOf(l)^1, l, n.when))
}

// aheadStart returns the start of the earliest target whose timers moved
// ahead are still pending, in its band or on its ahead list, and whether
// there is one. Targets' starts increase with their levels.
func (w *Wheel[T]) aheadStart() (uint64, bool) {
	idle := w.idleLevels()
	for t := w.tgt; t != 0; t &= t - 1 {
		l := uint(bits.TrailingZeros16(t))
		if idle&w.band(l) != 0 || w.heads[listAhead+l].first != 0 {
			return w.pre[l].start, true
		}
	}
	return 0, false
}

// cross moves the clock to the start of a, the lowest target: the levels
// below a swap banks, so what Refine placed becomes live (the idle banks
// there are a's band, as a is the lowest target; the live banks there are
// empty, as every deadline before a's start has fired); what is left in
// the source slot, armed since Refine emptied it or not yet moved, is
// sifted as Advance sifts any slot, behind what was refined ahead (it was
// armed later); then the timers due exactly at the start fire, in arm
// order. The next target up, if any, now owns the idle banks below a too:
// empty, they were the live ones.
func (w *Wheel[T]) cross(a uint, fire func(T)) {
	p := w.pre[a]
	w.tgt &^= 1 << a
	w.pre[a] = ahead{}
	w.cur = p.start
	w.bank ^= 1<<a - 1
	w.sift(p.src, listAhead+uint16(a))
	w.fireAll(listAhead+uint16(a), fire)
}

// fireAll fires every timer on list, in order, through the draining list.
func (w *Wheel[T]) fireAll(list uint16, fire func(T)) {
	if w.heads[list].first == 0 {
		return
	}
	w.heads[listDraining] = w.heads[list]
	w.heads[list] = listHead{}
	for i := w.heads[listDraining].first; i != 0; i = w.at(i).next {
		w.at(i).list = listDraining
	}
	w.fireDraining(fire)
}

// fireDraining fires the draining list, in order. A timer that fire arms
// goes elsewhere (the due list or a slot), so the loop ends; a panic leaves
// the rest there for advanceDone.
func (w *Wheel[T]) fireDraining(fire func(T)) {
	for w.heads[listDraining].first != 0 {
		w.fireFirst(listDraining, fire)
	}
}

// sift empties a slot list whose start cur has just reached, firing
// nothing: timers due at cur go to the end of list due, the rest move to
// lower levels (refine-on-drain; they keep their seq, so Handles stay
// valid), each in list order.
func (w *Wheel[T]) sift(list, due uint16) {
	for w.heads[list].first != 0 {
		i := w.heads[list].first
		n := w.at(i)
		w.unlink(i, n)
		if n.when == w.cur {
			w.link(i, n, due)
		} else {
			w.insert(i, n) // n.when > cur agrees with cur on the slot's digit: a lower level
		}
	}
}

// fireFirst removes the first timer on list and passes its value to fire.
func (w *Wheel[T]) fireFirst(list uint16, fire func(T)) {
	i := w.heads[list].first
	n := w.at(i)
	v := n.val
	w.unlink(i, n)
	w.release(i, n)
	w.n--
	fire(v) // may Arm: n is not to be used after this
}

// nextSlot returns the start of the earliest occupied slot, which by THE
// INVARIANT is a lower bound on every deadline in the levels.
func (w *Wheel[T]) nextSlot() (uint64, bool) {
	live := w.liveLevels()
	if live == 0 {
		return 0, false
	}
	l := uint(bits.TrailingZeros16(live))
	s := uint64(bits.TrailingZeros64(w.occ[w.bankOf(l)][l]))
	shift := l * slotBits
	// For l = 10, shift+slotBits = 66 and the mask is all ones: Go shifts
	// by >= 64 give 0, so 0-1 wraps to MaxUint64.
	high := w.cur &^ (uint64(1)<<(shift+slotBits) - 1)
	return high | s<<shift, true
}

// insert links node i (already holding its deadline) onto the list THE
// INVARIANT assigns it relative to cur: a slot, or the due list.
func (w *Wheel[T]) insert(i int32, n *node[T]) {
	var list uint16
	if n.when <= w.cur {
		if w.heads[listDue].first == 0 || n.when < w.dueMin {
			w.dueMin = n.when
		}
		list = listDue
	} else {
		l := levelOf(n.when, w.cur)
		list = w.occupy(w.bankOf(l), l, n.when)
	}
	w.link(i, n, list)
}

// occupy returns the list of bank b, level l that deadline d belongs to,
// marking it occupied.
func (w *Wheel[T]) occupy(b, l uint, d uint64) uint16 {
	s := uint(d>>(l*slotBits)) & slotMask
	w.occ[b][l] |= 1 << s
	w.levels[b] |= 1 << l
	return uint16(b*bankLists + l*numSlots + s)
}

// levelOf is the level of deadline d relative to clock c: the index of the
// most significant base-64 digit in which they differ. d != c.
func levelOf(d, c uint64) uint { return uint(bits.Len64(d^c)-1) / slotBits }

// bankOf is the live bank of level l.
func (w *Wheel[T]) bankOf(l uint) uint { return uint(w.bank>>l) & 1 }

// liveLevels is the level mask of the live banks.
func (w *Wheel[T]) liveLevels() uint16 {
	return w.levels[0]&^w.bank | w.levels[1]&w.bank
}

// idleLevels is the level mask of the idle banks: what Refine moved ahead.
func (w *Wheel[T]) idleLevels() uint16 {
	return w.levels[1]&^w.bank | w.levels[0]&w.bank
}

// link appends node i to list.
func (w *Wheel[T]) link(i int32, n *node[T], list uint16) {
	n.list = list
	h := &w.heads[list]
	h.n++
	n.next = 0
	n.prev = h.last
	if h.last != 0 {
		w.at(h.last).next = i
	} else {
		h.first = i
	}
	h.last = i
}

// unlink removes node i from its list, keeping the bitmaps exact.
func (w *Wheel[T]) unlink(i int32, n *node[T]) {
	h := &w.heads[n.list]
	h.n--
	if n.prev != 0 {
		w.at(n.prev).next = n.next
	} else {
		h.first = n.next
	}
	if n.next != 0 {
		w.at(n.next).prev = n.prev
	} else {
		h.last = n.prev
	}
	if h.first == 0 && n.list < listDue {
		b, r := n.list/bankLists, n.list%bankLists
		l, s := r/numSlots, r%numSlots
		w.occ[b][l] &^= 1 << s
		if w.occ[b][l] == 0 {
			w.levels[b] &^= 1 << l
		}
	}
}

// lookup returns the pending node h names, or nil if h is stale or zero.
func (w *Wheel[T]) lookup(h Handle) *node[T] {
	if h.seq == 0 || h.idx <= 0 || h.idx >= w.nnodes {
		return nil
	}
	n := w.at(h.idx)
	if n.seq != h.seq {
		return nil // fired, cancelled, or the node was reused
	}
	return n
}

// alloc returns the index of a free node, adding a chunk if none is.
func (w *Wheel[T]) alloc() int32 {
	if i := w.free; i != 0 {
		w.free = w.at(i).next
		return i
	}
	if w.nnodes == 0 {
		w.chunks = append(w.chunks, newChunk[T]())
		w.chunks[0][0].list = listFree // index 0: "none"
		w.nnodes = 1
	}
	if w.nnodes == math.MaxInt32 {
		panic("timers: more than 2^31-2 pending timers")
	}
	i := w.nnodes
	if int(i>>chunkBits) == len(w.chunks) {
		w.chunks = append(w.chunks, newChunk[T]())
	}
	w.nnodes++
	return i
}

// newChunk allocates a chunk of nodes and writes to every node at once. A
// fresh chunk's pages are untouched, and the collector, scanning the chunk
// for pointers, reads them first: the kernel maps its shared zero page, and
// each later first write to a page is a copy-on-write fault with a TLB
// shootdown to every other CPU running the process. Writing now takes the
// plain fault instead (in the 100k timers benchmark the shootdowns were 6%
// of the spawn burst's CPU).
func newChunk[T any]() *[chunkSize]node[T] {
	c := new([chunkSize]node[T])
	for i := range c {
		c[i].list = 0
	}
	return c
}

// at returns node i. i must be below nnodes.
func (w *Wheel[T]) at(i int32) *node[T] {
	return &w.chunks[uint32(i)>>chunkBits][uint32(i)&chunkMask]
}

// release returns an unlinked node to the free list. Dropping seq to zero is
// what makes every Handle to it stale (see Staleness).
func (w *Wheel[T]) release(i int32, n *node[T]) {
	var zero T
	n.val = zero // let the GC have what the value points to
	n.seq = 0
	n.list = listFree
	n.prev = 0
	n.next = w.free
	w.free = i
}

func minU(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

package timers_test

import (
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/colonyrt/colony/timers"
	"pgregory.net/rapid"
)

// satAdd returns a+b, saturated to the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// refTimer is one timer in the reference model.
type refTimer struct {
	id       int
	h        timers.Handle
	deadline int64
	overdue  bool  // deadline <= clock when armed
	armedAt  int64 // the clock when armed
}

// wheelMachine runs a Wheel side by side with a reference model: a plain
// list of pending timers. The model fires, on Advance(now), every pending
// timer with deadline <= max(now, clock): first the ones overdue at arm
// time in arm order, then the others sorted by (deadline, arm order).
type wheelMachine struct {
	w       *timers.Wheel[int]
	clock   int64
	pending []*refTimer     // arm order
	handles []timers.Handle // every handle ever issued, with id = index
	nextID  int

	// next is what the runtime's timekeeper would sleep until (actor/timer.go,
	// tm.next): min(NextExpiry, Refine's answer) at the last poll, lowered
	// after each Arm to min(deadline, NextRefine); math.MinInt64 after an
	// Advance with no Refine after it (the runtime never does that: the
	// next Keep polls at once). pollMark is the first id armed since the
	// last poll whose Refine answered a time after the clock.
	next     int64
	pollMark int

	// gone holds the starts of the coarse slots and targets that were
	// there when a timer was cancelled since the last poll: a slot behind
	// them may be due for Refine earlier once they are gone, but nothing
	// tells the timekeeper, whose next still covers them (checkWake).
	gone []int64

	near bool // Arm draws with drawNear only

	// jumped is the clock after the last Advance that was not the
	// timekeeper's (KeepPaced): it may have jumped past a run-up.
	jumped int64
}

var startClocks = []int64{
	math.MinInt64, // the zero Wheel
	math.MinInt64 + 1,
	-1,
	0,
	1,
	63,
	64*64 - 1,
	1<<36 - 3,
	1 << 62,
	-(1 << 62),
	math.MaxInt64 - 1<<20,
	math.MaxInt64 - 70,
	math.MaxInt64,
}

func newWheelMachine(t *rapid.T) *wheelMachine {
	var start int64
	if rapid.Bool().Draw(t, "randomStart") {
		start = rapid.Int64().Draw(t, "start")
	} else {
		start = rapid.SampledFrom(startClocks).Draw(t, "start")
	}
	m := &wheelMachine{clock: start, next: math.MaxInt64}
	if start == math.MinInt64 {
		m.w = new(timers.Wheel[int]) // the zero value's clock reads MinInt64
	} else {
		m.w = timers.New[int](start)
	}
	return m
}

func (m *wheelMachine) drawDuration(t *rapid.T) int64 {
	switch rapid.IntRange(0, 8).Draw(t, "durKind") {
	case 0:
		return -rapid.Int64Range(1, 1<<40).Draw(t, "neg")
	case 1:
		return 0
	case 2:
		return rapid.Int64Range(1, 64).Draw(t, "tiny")
	case 3:
		return rapid.Int64Range(1, 5000).Draw(t, "small")
	case 4:
		return rapid.Int64Range(1, 1<<24).Draw(t, "medium")
	case 5:
		return rapid.Int64Range(1, 1<<45).Draw(t, "large")
	case 6:
		return rapid.Int64Range(1, math.MaxInt64).Draw(t, "huge")
	case 7:
		// Land exactly on, or next to, a level boundary ahead of the clock.
		k := uint(rapid.IntRange(1, timers.NumLevels-1).Draw(t, "k"))
		u := timers.ToTick(m.clock)
		b := (u | (uint64(1)<<(k*timers.SlotBits) - 1)) + 1 // next multiple of 64^k
		if b == 0 {
			return math.MaxInt64
		}
		d := timers.FromTick(b) - m.clock // may overflow into a negative for k=10; fine, just another duration
		return d + rapid.Int64Range(-1, 1).Draw(t, "delta")
	default:
		// Share a deadline with a pending timer: tests tie order.
		if len(m.pending) == 0 {
			return 5
		}
		p := rapid.SampledFrom(m.pending).Draw(t, "tie")
		return p.deadline - m.clock
	}
}

// drawNear draws a deadline at or just after the start of one of the next
// few slots of level 2 to 5 ahead of the clock, or equal to a pending
// timer's: it makes targets of Refine, earlier coarse slots that overtake
// them, and ties between timers moved ahead, moved back and armed since.
func (m *wheelMachine) drawNear(t *rapid.T) int64 {
	if len(m.pending) > 0 && rapid.IntRange(0, 3).Draw(t, "nearTie") == 0 {
		return rapid.SampledFrom(m.pending).Draw(t, "tie").deadline
	}
	k := uint(rapid.IntRange(2, 5).Draw(t, "nearLevel"))
	span := uint64(1) << (k * timers.SlotBits)
	u := timers.ToTick(m.clock)
	b := (u | (span - 1)) + 1 + uint64(rapid.IntRange(0, 3).Draw(t, "nearSlot"))*span
	d := b + rapid.SampledFrom([]uint64{0, 0, 1, 5, 63, 64, 100, 4095, 4096, 5000, span / 2}).Draw(t, "nearOffset")
	if d <= u { // past the end of time
		return math.MaxInt64
	}
	return timers.FromTick(d)
}

func (m *wheelMachine) Arm(t *rapid.T) {
	var deadline int64
	if m.near {
		deadline = m.drawNear(t)
	} else if rapid.IntRange(0, 9).Draw(t, "absolute") == 0 {
		deadline = rapid.Int64().Draw(t, "deadline")
	} else {
		deadline = satAdd(m.clock, m.drawDuration(t))
	}
	m.arm(deadline)
}

// arm arms a timer, lowering next as the runtime does.
func (m *wheelMachine) arm(deadline int64) {
	id := m.nextID
	m.nextID++
	h := m.w.Arm(deadline, id)
	m.next = min(m.next, deadline, m.w.NextRefine())
	m.handles = append(m.handles, h)
	m.pending = append(m.pending, &refTimer{id: id, h: h, deadline: deadline, overdue: deadline <= m.clock, armedAt: m.clock})
}

// ArmBurst arms up to 80 timers near one deadline drawn by drawNear, ties
// included: enough to fill a coarse slot to the size NextRefine reports.
func (m *wheelMachine) ArmBurst(t *rapid.T) {
	d := m.drawNear(t)
	for i := range rapid.IntRange(1, 80).Draw(t, "burst") {
		m.arm(satAdd(d, int64(i%5)))
	}
}

func (m *wheelMachine) find(id int) int {
	return slices.IndexFunc(m.pending, func(r *refTimer) bool { return r.id == id })
}

func (m *wheelMachine) Cancel(t *rapid.T) {
	if len(m.handles) == 0 {
		if m.w.Cancel(timers.Handle{}) {
			t.Fatal("Cancel(zero Handle) = true")
		}
		return
	}
	id := rapid.IntRange(0, len(m.handles)-1).Draw(t, "cancel")
	want := m.find(id)
	m.noteGone()
	got := m.w.Cancel(m.handles[id])
	if got != (want >= 0) {
		t.Fatalf("Cancel(timer %d) = %v, model says pending=%v", id, got, want >= 0)
	}
	if want >= 0 {
		m.pending = slices.Delete(m.pending, want, want+1)
		if m.w.Len() == 0 {
			// As the runtime does (syncArmedLocked): with nothing
			// pending nobody keeps time, and the next arm publishes
			// afresh, lowering next to its deadline and NextRefine.
			m.next = math.MaxInt64
			m.gone = nil
		}
	}
	// A second cancel is always a clean false.
	if m.w.Cancel(m.handles[id]) {
		t.Fatalf("second Cancel(timer %d) = true", id)
	}
}

func (m *wheelMachine) Deadline(t *rapid.T) {
	if len(m.handles) == 0 {
		return
	}
	id := rapid.IntRange(0, len(m.handles)-1).Draw(t, "deadline")
	d, ok := m.w.Deadline(m.handles[id])
	i := m.find(id)
	if ok != (i >= 0) {
		t.Fatalf("Deadline(timer %d) pending=%v, model says %v", id, ok, i >= 0)
	}
	if ok && d != m.pending[i].deadline {
		t.Fatalf("Deadline(timer %d) = %d, want %d", id, d, m.pending[i].deadline)
	}
}

func (m *wheelMachine) earliest() (int64, bool) {
	if len(m.pending) == 0 {
		return 0, false
	}
	e := int64(math.MaxInt64)
	for _, r := range m.pending {
		e = min(e, r.deadline)
	}
	return e, true
}

func (m *wheelMachine) drawNow(t *rapid.T) int64 {
	switch rapid.IntRange(0, 8).Draw(t, "stepKind") {
	case 0:
		return m.clock
	case 1:
		return satAdd(m.clock, rapid.Int64Range(1, 64).Draw(t, "tinyStep"))
	case 2:
		return satAdd(m.clock, rapid.Int64Range(1, 5000).Draw(t, "smallStep"))
	case 3, 4:
		e, ok := m.earliest()
		if !ok {
			return satAdd(m.clock, 1)
		}
		return satAdd(e, rapid.Int64Range(-1, 1).Draw(t, "nearEarliest"))
	case 5:
		k := uint(rapid.IntRange(1, timers.NumLevels-1).Draw(t, "levelJump"))
		u := timers.ToTick(m.clock)
		b := (u | (uint64(1)<<(k*timers.SlotBits) - 1)) + 1
		if b == 0 {
			return math.MaxInt64
		}
		return satAdd(timers.FromTick(b), rapid.Int64Range(-1, 1).Draw(t, "boundaryDelta"))
	case 6:
		return satAdd(m.clock, rapid.Int64Range(1, math.MaxInt64).Draw(t, "hugeStep"))
	case 7:
		return satAdd(m.clock, -rapid.Int64Range(1, 1000).Draw(t, "backStep"))
	default:
		// What the timekeeper does: sleep until NextExpiry, or until Refine
		// asked to be called again, then Advance.
		e, ok := m.w.NextExpiry()
		if !ok {
			e = math.MaxInt64
		}
		if e = min(e, m.next); e == math.MaxInt64 {
			return m.clock
		}
		return e
	}
}

func (m *wheelMachine) Advance(t *rapid.T) {
	m.advance(t, m.drawNow(t))
	m.next = math.MinInt64 // stale until the next Refine
	m.jumped = m.clock
}

// advance runs Advance(now) and checks what fired against the model.
func (m *wheelMachine) advance(t *rapid.T, now int64) {
	eff := max(now, m.clock)

	// The model's due list, in the promised order.
	var want, stay []*refTimer
	for _, r := range m.pending {
		if r.deadline <= eff {
			want = append(want, r)
		} else {
			stay = append(stay, r)
		}
	}
	slices.SortStableFunc(want, func(a, b *refTimer) int {
		switch {
		case a.overdue != b.overdue:
			if a.overdue {
				return -1
			}
			return 1
		case a.overdue:
			return a.id - b.id // arm order
		case a.deadline != b.deadline:
			if a.deadline < b.deadline {
				return -1
			}
			return 1
		default:
			return a.id - b.id
		}
	})

	var got []int
	m.w.Advance(now, func(id int) {
		if id < 0 || id >= len(m.handles) {
			t.Fatalf("fired unknown value %d", id)
		}
		got = append(got, id)
		if _, ok := m.w.Deadline(m.handles[id]); ok {
			t.Fatalf("timer %d still pending inside its fire", id)
		}
		if m.w.Cancel(m.handles[id]) {
			t.Fatalf("Cancel(timer %d) = true inside its fire", id)
		}
		if l := m.w.Len(); l != len(m.pending)-len(got) {
			t.Fatalf("Len inside fire = %d, want %d", l, len(m.pending)-len(got))
		}
	})
	m.pending = stay
	m.clock = eff

	wantIDs := make([]int, len(want))
	for i, r := range want {
		wantIDs[i] = r.id
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("Advance(%d) from clock fired %v, want %v", now, got, wantIDs)
	}
	// Nothing early: every fired deadline is <= eff (implied by the model
	// match above, checked again directly).
	for _, r := range want {
		if r.deadline > eff {
			t.Fatalf("timer %d fired early", r.id)
		}
	}
}

// Refine does some of the work ahead; nothing observable may change (Check
// compares the wheel with the model after it). While it answers "now", a
// call with a budget of one makes progress: within a few calls per pending
// timer it answers a later time.
func (m *wheelMachine) Refine(t *rapid.T) {
	r := m.w.Refine(rapid.IntRange(0, 40).Draw(t, "budget"))
	if rapid.Bool().Draw(t, "finish") {
		r = m.finishRefine(t, r, 1)
	}
	m.published(r)
}

// finishRefine calls Refine(budget) while r, its last answer, is at or
// before the clock, and returns the first later answer.
func (m *wheelMachine) finishRefine(t *rapid.T, r int64, budget int) int64 {
	// Each call that answers "now" moves a timer, ahead or back (retarget);
	// with the clock still, a timer moves back at most once, and ahead at
	// most once after that. The bound is generous.
	for calls := 0; r <= m.clock && r != math.MaxInt64; calls++ {
		if calls > 2*timers.NumLevels*(m.w.Len()+1) {
			t.Fatalf("Refine still returns %d (clock %d) after %d calls with %d pending", r, m.clock, calls, m.w.Len())
		}
		r = m.w.Refine(budget)
	}
	return r
}

// published sets next as the runtime does after a poll whose Refine
// answered r (publishLocked).
func (m *wheelMachine) published(r int64) {
	e, ok := m.w.NextExpiry()
	if !ok {
		e = math.MaxInt64
	}
	m.next = min(e, r)
	m.gone = nil
	if r > m.clock {
		m.pollMark = m.nextID
	}
}

// Keep plays the runtime's timekeeper for a few wake-ups: sleep until
// next, Advance, Refine until it answers a later time, publish. With next
// kept as the runtime keeps it, no coarse slot is crossed unrefined (as
// it would be if Arms that filled an earlier coarse slot lowered next only
// to their deadlines, or Refine stayed on a later slot it had started):
// the Advance may reach the start of an occupied coarse slot
// only with timers armed there since the last poll, which the crossing
// sifts as before Refine; and, unless the slot is a target of Refine,
// fewer than NextRefine reports.
func (m *wheelMachine) Keep(t *rapid.T) {
	budget := rapid.IntRange(1, 40).Draw(t, "keepBudget")
	for range rapid.IntRange(1, 8).Draw(t, "wakes") {
		d, ok := m.earliest()
		if !ok {
			return
		}
		if m.next == math.MaxInt64 && d < math.MaxInt64 { // MaxInt64 also means "none"
			t.Fatalf("timer due at %d pending and the timekeeper would sleep for ever", d)
		}
		wake := max(m.next, m.clock)
		if start, vals, target, ok := m.w.Backlog(); ok && start <= wake {
			if !target && len(vals) >= timers.AheadReport {
				t.Fatalf("clock %d: the Advance to %d crosses the coarse slot at %d unrefined: timers %v", m.clock, wake, start, vals)
			}
			for _, id := range vals {
				if id < m.pollMark {
					t.Fatalf("clock %d: the Advance to %d crosses the coarse slot at %d (a target: %v) with timer %d in it, armed before the last poll (timers armed since: %d on)", m.clock, wake, start, target, id, m.pollMark)
				}
			}
		}
		m.checkWake(t, wake)
		m.advance(t, wake)
		m.published(m.finishRefine(t, m.w.Refine(budget), budget))
	}
}

// noteGone records, before a Cancel, the starts of the coarse slots and
// targets that the timekeeper's next may still cover (gone).
func (m *wheelMachine) noteGone() {
	slots, targets := m.w.CoarseSlots()
	for _, x := range slots {
		m.gone = append(m.gone, x.Start)
	}
	m.gone = append(m.gone, targets...)
}

// checkWake fails if the timekeeper, waking at wake, has slept past the
// time from which Refine could have worked on a coarse slot holding
// NextRefine's 64 timers or more (not a target's source slot, which the
// crossing may sift: see Keep): the start of its run-up, or the crossing
// of the last coarse slot or target before it, if later, as Refine works
// on the slot crossed next only (one there at a Cancel since the last
// poll counts too: see gone). An Arm filling a slot behind an earlier
// coarse slot or target must report it: else the timekeeper, whose next is
// lowered only to the deadlines, sleeps until the first of them, past the
// run-up of the filled slot and as late as a tick before its start.
func (m *wheelMachine) checkWake(t *rapid.T, wake int64) {
	slots, targets := m.w.CoarseSlots()
	for _, b := range slots {
		if b.N < timers.AheadReport || b.TargetSrc {
			continue
		}
		due := max(b.Open, m.clock) // Refine can work on b from then on
		for _, x := range slots {
			if x.Start < b.Start {
				due = max(due, x.Start)
			}
		}
		for _, s := range targets {
			if s < b.Start {
				due = max(due, s)
			}
		}
		for _, s := range m.gone {
			if s < b.Start {
				due = max(due, s)
			}
		}
		if wake > due {
			t.Fatalf("clock %d: the timekeeper wakes at %d, past %d, when Refine could start on the coarse slot at %d (level %d, %d timers, run-up from %d)", m.clock, wake, due, b.Start, b.Level, b.N, b.Open)
		}
	}
}

// Clear drops everything; every handle issued so far must stay stale (the
// Cancel and Deadline actions draw old handles too).
func (m *wheelMachine) Clear(t *rapid.T) {
	if rapid.IntRange(0, 4).Draw(t, "clear") != 0 {
		return // rarely, or the wheel never fills
	}
	m.w.Clear()
	m.pending = nil
	m.next = math.MaxInt64
	m.gone = nil
	m.pollMark = m.nextID
}

// Check runs after every action.
func (m *wheelMachine) Check(t *rapid.T) {
	if err := m.w.CheckInvariants(); err != nil {
		t.Fatalf("invariant: %v", err)
	}
	if m.w.Len() != len(m.pending) {
		t.Fatalf("Len = %d, model has %d", m.w.Len(), len(m.pending))
	}
	if m.w.Now() != m.clock {
		t.Fatalf("Now = %d, model clock %d", m.w.Now(), m.clock)
	}
	e, ok := m.w.NextExpiry()
	d, any := m.earliest()
	if ok != any {
		t.Fatalf("NextExpiry ok=%v with %d pending", ok, len(m.pending))
	}
	if !ok {
		return
	}
	if e > d {
		t.Fatalf("NextExpiry %d after the earliest deadline %d", e, d)
	}
	if d <= m.clock {
		// Something is overdue: the bound must say "now or earlier".
		if e > m.clock {
			t.Fatalf("NextExpiry %d after clock %d with an overdue timer", e, m.clock)
		}
		return
	}
	// Tightness: d rounded down to the level at which it differs from the
	// clock; exact within the clock's aligned 64 ms block.
	x := timers.ToTick(d) ^ timers.ToTick(m.clock)
	l := uint(bits.Len64(x)-1) / timers.SlotBits
	wantE := timers.FromTick(timers.ToTick(d) &^ (uint64(1)<<(l*timers.SlotBits) - 1))
	if e != wantE {
		t.Fatalf("NextExpiry = %d, want %d (earliest %d, clock %d, level %d)", e, wantE, d, m.clock, l)
	}
	if e <= m.clock {
		t.Fatalf("NextExpiry %d not after clock %d with nothing overdue", e, m.clock)
	}
}

func TestWheelModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newWheelMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"Arm":      m.Arm,
			"Arm2":     m.Arm, // arm more often than the rest, so the wheel fills
			"Cancel":   m.Cancel,
			"Deadline": m.Deadline,
			"Advance":  m.Advance,
			"Refine":   m.Refine,
			"Keep":     m.Keep,
			"Clear":    m.Clear,
			"":         m.Check,
		})
	})
}

// TestRefineRetargetModel runs the model with deadlines bunched at the
// starts of the next few coarse slots, in bursts that fill a slot, and the
// clock moved mostly as the timekeeper moves it (Keep), so that Refine's
// targets are often overtaken by an earlier slot (retarget, moveBack) and
// nested: it checks that no coarse slot is crossed unrefined and that
// nothing fires differently.
func TestRefineRetargetModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newWheelMachine(t)
		m.near = true
		t.Repeat(map[string]func(*rapid.T){
			"Arm":     m.Arm,
			"Arm2":    m.Arm,
			"Burst":   m.ArmBurst,
			"Cancel":  m.Cancel,
			"Refine":  m.Refine,
			"Refine2": m.Refine,
			"Keep":    m.Keep,
			"Paced":   m.KeepPaced,
			"Advance": m.Advance,
			"":        m.Check,
		})
	})
}

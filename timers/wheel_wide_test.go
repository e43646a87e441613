package timers_test

import (
	"math"
	"testing"

	"github.com/colonyrt/colony/timers"
	"pgregory.net/rapid"
)

// drawWide draws a deadline at or near the start of one of the next few
// coarse slots of any level (2 to 10) ahead of the clock, at or next to the
// end of the slot before it, or equal to a pending timer's: with RunUp, it
// makes targets of Refine at every level, the largest included, and nests
// them.
func (m *wheelMachine) drawWide(t *rapid.T) int64 {
	if len(m.pending) > 0 && rapid.IntRange(0, 3).Draw(t, "wideTie") == 0 {
		return rapid.SampledFrom(m.pending).Draw(t, "tie").deadline
	}
	k := uint(rapid.IntRange(2, timers.NumLevels-1).Draw(t, "wideLevel"))
	span := uint64(1) << (k * timers.SlotBits)
	u := timers.ToTick(m.clock)
	b := (u | (span - 1)) + 1 + uint64(rapid.IntRange(0, 2).Draw(t, "wideSlot"))*span
	var d uint64
	switch rapid.IntRange(0, 3).Draw(t, "wideWhere") {
	case 0:
		d = b
	case 1:
		d = b + rapid.Uint64Range(1, 4*4096).Draw(t, "wideAfter")
	case 2:
		d = b - rapid.Uint64Range(1, 64*64*9).Draw(t, "wideBefore") // in the slot before: a finer coarse slot in the run-up
	default:
		d = b + span/2
	}
	if b == 0 || d <= u { // past the end of time, or not ahead
		return satAdd(m.clock, rapid.Int64Range(1, 1<<20).Draw(t, "wideFallback"))
	}
	return timers.FromTick(d)
}

// ArmWide arms one or a burst of timers near a deadline drawn by drawWide.
func (m *wheelMachine) ArmWide(t *rapid.T) {
	d := m.drawWide(t)
	n := 1
	if rapid.IntRange(0, 2).Draw(t, "wideBurst") == 0 {
		n = rapid.IntRange(2, 70).Draw(t, "wideBurstN")
	}
	for i := range n {
		m.arm(satAdd(d, int64(i%3)*rapid.SampledFrom([]int64{1, 64, 4096}).Draw(t, "wideStride")))
	}
}

// RunUp advances the clock into (or just before, or past) the run-up of
// the coarse slot of a pending timer, at its own level or a coarser one:
// with big jumps, several levels at once.
func (m *wheelMachine) RunUp(t *rapid.T) {
	if len(m.pending) == 0 {
		return
	}
	r := rapid.SampledFrom(m.pending).Draw(t, "runUpOf")
	u, c := timers.ToTick(r.deadline), timers.ToTick(m.clock)
	if u <= c {
		return
	}
	top := uint(64-1-countLeadingZeros(u^c)) / timers.SlotBits // the level it is at
	if top < 2 {
		return
	}
	l := uint(rapid.IntRange(2, int(top)).Draw(t, "runUpLevel"))
	shift := l * timers.SlotBits
	s := u &^ (uint64(1)<<shift - 1) // start of its level-l slot
	k := rapid.Uint64Range(0, 9).Draw(t, "runUpSlots")
	to := s - k<<(shift-timers.SlotBits) + uint64(rapid.IntRange(-2, 2).Draw(t, "runUpDelta"))
	if to <= c || to > u { // not forward, or past the timer itself: clamp
		to = max(c, min(to, u))
	}
	m.advance(t, timers.FromTick(to))
	m.next = math.MinInt64
	m.jumped = m.clock
	if rapid.Bool().Draw(t, "runUpRefine") {
		m.Refine(t)
	}
}

func countLeadingZeros(x uint64) int {
	n := 0
	for i := 63; i >= 0 && x&(1<<uint(i)) == 0; i-- {
		n++
	}
	return n
}

// CancelPending cancels a pending timer: most often one Refine moved ahead
// or is moving back, as bursts fill the targets.
func (m *wheelMachine) CancelPending(t *rapid.T) {
	if len(m.pending) == 0 {
		return
	}
	i := rapid.IntRange(0, len(m.pending)-1).Draw(t, "cancelPending")
	r := m.pending[i]
	m.noteGone()
	if !m.w.Cancel(r.h) {
		t.Fatalf("Cancel(pending timer %d) = false", r.id)
	}
	m.pending = append(m.pending[:i:i], m.pending[i+1:]...)
	if m.w.Len() == 0 {
		// As the runtime does (syncArmedLocked): with nothing pending
		// nobody keeps time, and the next arm publishes afresh.
		m.next = math.MaxInt64
		m.gone = nil
	}
}

// KeepPaced plays the runtime's timekeeper as Keep does, but lets the clock
// move while Refine works: each wake-up it Advances and calls Refine once;
// if Refine asks to be called again at once, the next wake-up is a tick
// later. It fails if an Advance crosses a coarse slot of 64 timers or
// more with more than a budget of them left unrefined that were armed
// before the slot's
// run-up began, with the clock moved since by the timekeeper only: those
// the protocol must have moved ahead in time. (It excuses slots squeezed
// behind an earlier one: Refine has at least a level-2 slot, 4096 ticks,
// between that one's crossing and theirs, which is plenty here.)
func (m *wheelMachine) KeepPaced(t *rapid.T) {
	budget := rapid.IntRange(20, 60).Draw(t, "pacedBudget")
	atOnce := false
	defer func() {
		if atOnce {
			// Refine asked to be called at once: the next poll (Keep's,
			// say) comes before the clock moves again.
			m.next = min(m.next, m.clock)
		}
	}()
	for range rapid.IntRange(1, 60).Draw(t, "pacedWakes") {
		d, ok := m.earliest()
		if !ok {
			return
		}
		if m.next == math.MaxInt64 && d < math.MaxInt64 { // MaxInt64 also means "none"
			t.Fatalf("timer due at %d pending and the timekeeper would sleep for ever", d)
		}
		wake := max(m.next, m.clock)
		slots, _ := m.w.CoarseSlots()
		for _, b := range slots {
			if b.Start > wake {
				break
			}
			if b.N < timers.AheadReport {
				continue // cheap to cross in one go: not reported
			}
			late := 0
			for _, id := range b.Vals {
				if r := m.pending[m.find(id)]; r.armedAt >= m.jumped && r.armedAt < b.Open && m.jumped < b.Open {
					late++
				}
			}
			if late > budget {
				t.Fatalf("clock %d: the Advance to %d crosses the coarse slot at %d (level %d, run-up from %d) with %d of its timers, armed before the run-up, not refined ahead", m.clock, wake, b.Start, b.Level, b.Open, late)
			}
		}
		m.checkWake(t, wake)
		m.advance(t, wake)
		m.published(m.w.Refine(budget))
		if atOnce = m.next <= m.clock; atOnce {
			m.next = satAdd(m.clock, 1)
		}
	}
}

// TestRefineWideModel runs the model with targets at every level, the
// largest included, reached by jumps into their run-ups, big Advance jumps
// across several of them at once, and cancels of pending timers, most of
// them moved ahead or moving back.
func TestRefineWideModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newWheelMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"Arm":     m.Arm,
			"Wide":    m.ArmWide,
			"Wide2":   m.ArmWide,
			"Cancel":  m.CancelPending,
			"Cancel2": m.Cancel,
			"Refine":  m.Refine,
			"RunUp":   m.RunUp,
			"RunUp2":  m.RunUp,
			"Keep":    m.Keep,
			"Paced":   m.KeepPaced,
			"Paced2":  m.KeepPaced,
			"Advance": m.Advance,
			"Clear":   m.Clear,
			"":        m.Check,
		})
	})
}

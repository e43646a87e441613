package timers_test

import (
	"math"
	"slices"
	"testing"

	"github.com/colonyrt/colony/timers"
	"pgregory.net/rapid"
)

// TestWheelReentrant drives a wheel whose fire callbacks arm, cancel and
// panic, mixed with Refine and Clear, from clocks anywhere in the int64
// range, and checks after every step: nothing early, lost or twice; due
// timers first, then deadline order with ties in arm order (armed from fire
// included); Len, Deadline and NextExpiry; THE INVARIANT. (A timer armed
// from fire must not overtake an older one of equal deadline.)

type reTimer struct {
	id       int
	deadline int64
	due      bool // on the due list (overdue when armed, or after a panic)
	inFire   bool // armed from fire during the current Advance
}

type reMachine struct {
	w       *timers.Wheel[int]
	pending map[int]*reTimer
	handles []timers.Handle
	refine  int64
}

type rePanic struct{}

func (m *reMachine) arm(t *rapid.T, label string) {
	now := m.w.Now()
	var d int64
	switch rapid.IntRange(0, 7).Draw(t, label+"kind") {
	case 6, 7:
		// At or just after the start of a coarse slot of any level: with
		// the run-up jumps of Advance, Refine's targets, nested, crossed
		// by an Advance whose fire arms, cancels and panics.
		k := uint(rapid.IntRange(2, timers.NumLevels-1).Draw(t, label+"wideLevel"))
		span := uint64(1) << (k * timers.SlotBits)
		u := timers.ToTick(now)
		b := (u | (span - 1)) + 1 + uint64(rapid.IntRange(0, 1).Draw(t, label+"wideSlot"))*span
		b += rapid.SampledFrom([]uint64{0, 0, 1, 63, 64, 4095, 4096}).Draw(t, label+"wideOff")
		if b <= u {
			d = now
		} else {
			d = timers.FromTick(b)
		}
	case 0:
		d = satAdd(now, -rapid.Int64Range(0, 100).Draw(t, label+"neg"))
	case 1:
		d = satAdd(now, rapid.Int64Range(1, 70).Draw(t, label+"tiny"))
	case 2:
		d = satAdd(now, rapid.Int64Range(1, 1<<14).Draw(t, label+"small"))
	case 3:
		d = satAdd(now, rapid.Int64Range(1, 1<<20).Draw(t, label+"med"))
	case 4:
		d = satAdd(now, rapid.Int64Range(1, math.MaxInt64).Draw(t, label+"huge"))
	default:
		if len(m.pending) == 0 {
			d = now
		} else {
			ids := make([]int, 0, len(m.pending))
			for id := range m.pending {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			d = m.pending[rapid.SampledFrom(ids).Draw(t, label+"tie")].deadline
		}
	}
	id := len(m.handles)
	m.handles = append(m.handles, m.w.Arm(d, id))
	m.pending[id] = &reTimer{id: id, deadline: d, due: d <= now}
}

func (m *reMachine) cancel(t *rapid.T, label string) {
	if len(m.handles) == 0 {
		return
	}
	id := rapid.IntRange(0, len(m.handles)-1).Draw(t, label)
	_, want := m.pending[id]
	if got := m.w.Cancel(m.handles[id]); got != want {
		t.Fatalf("Cancel(%d) = %v, want %v", id, got, want)
	}
	delete(m.pending, id)
}

func (m *reMachine) Arm(t *rapid.T)    { m.arm(t, "") }
func (m *reMachine) Cancel(t *rapid.T) { m.cancel(t, "c") }

func (m *reMachine) Refine(t *rapid.T) {
	m.refine = m.w.Refine(rapid.IntRange(0, 8).Draw(t, "budget"))
	for calls := 0; m.refine <= m.w.Now() && m.refine != math.MaxInt64 && rapid.Bool().Draw(t, "more"); calls++ {
		m.refine = m.w.Refine(rapid.IntRange(1, 8).Draw(t, "budget2"))
	}
}

func (m *reMachine) Clear(t *rapid.T) {
	if rapid.IntRange(0, 9).Draw(t, "clear") != 0 {
		return
	}
	m.w.Clear()
	clear(m.pending)
}

func (m *reMachine) Advance(t *rapid.T) {
	clock := m.w.Now()
	var now int64
	switch rapid.IntRange(0, 6).Draw(t, "step") {
	case 5, 6:
		// Into the run-up of the coarse slot of a pending timer.
		now = clock
		if len(m.pending) > 0 {
			ids := make([]int, 0, len(m.pending))
			for id := range m.pending {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			u, c := timers.ToTick(m.pending[rapid.SampledFrom(ids).Draw(t, "runUpOf")].deadline), timers.ToTick(clock)
			if u > c+1 {
				l := uint(rapid.IntRange(2, timers.NumLevels-1).Draw(t, "runUpLevel"))
				shift := l * timers.SlotBits
				s := u &^ (uint64(1)<<shift - 1)
				to := s - rapid.Uint64Range(0, 8).Draw(t, "runUpSlots")<<(shift-timers.SlotBits) - rapid.Uint64Range(0, 1).Draw(t, "runUpDelta")
				if to > c && to < u {
					now = timers.FromTick(to)
				}
			}
		}
	case 0:
		now = satAdd(clock, rapid.Int64Range(0, 70).Draw(t, "s0"))
	case 1:
		now = satAdd(clock, rapid.Int64Range(0, 1<<14).Draw(t, "s1"))
	case 2:
		now = satAdd(clock, rapid.Int64Range(0, 1<<22).Draw(t, "s2"))
	case 3:
		e, ok := m.w.NextExpiry()
		if !ok {
			e = math.MaxInt64
		}
		now = min(e, m.refine)
		if now == math.MaxInt64 {
			now = clock
		}
	default:
		now = satAdd(clock, rapid.Int64Range(0, math.MaxInt64).Draw(t, "s3"))
	}
	eff := max(now, clock)
	for _, r := range m.pending {
		r.inFire = false
	}
	var fired []*reTimer
	panicked := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(rePanic); !ok {
					panic(r)
				}
				panicked = true
			}
		}()
		m.w.Advance(now, func(id int) {
			r := m.pending[id]
			if r == nil {
				t.Fatalf("fired %d, not pending", id)
			}
			if r.deadline > eff {
				t.Fatalf("fired %d early: deadline %d > %d", id, r.deadline, eff)
			}
			if r.deadline > m.w.Now() && !r.due {
				t.Fatalf("fired %d with deadline %d while Now() = %d", id, r.deadline, m.w.Now())
			}
			delete(m.pending, id)
			fired = append(fired, r)
			if m.w.Len() != len(m.pending) {
				t.Fatalf("Len in fire %d, want %d", m.w.Len(), len(m.pending))
			}
			for k := rapid.IntRange(0, 2).Draw(t, "acts"); k > 0; k-- {
				switch rapid.IntRange(0, 4).Draw(t, "act") {
				case 0, 1:
					n := len(m.handles)
					m.arm(t, "f")
					m.pending[n].inFire = true
				case 2, 3:
					m.cancel(t, "fc")
				default:
					if rapid.IntRange(0, 3).Draw(t, "panic") == 0 {
						panic(rePanic{})
					}
				}
			}
		})
	}()
	// Order: the due ones first, then non-decreasing deadlines; ties in id
	// order among timers that were pending before this Advance.
	i := 0
	for i < len(fired) && fired[i].due {
		i++
	}
	for j := i; j < len(fired); j++ {
		if fired[j].due {
			t.Fatalf("due timer %d fired after non-due ones: %v", fired[j].id, ids(fired))
		}
		if j > i {
			a, b := fired[j-1], fired[j]
			if a.deadline > b.deadline || a.deadline == b.deadline && a.id > b.id {
				t.Fatalf("deadline order: %v", ids(fired))
			}
		}
	}
	if panicked {
		for _, r := range m.pending {
			if r.deadline <= m.w.Now() {
				r.due = true
			}
		}
	} else {
		for _, r := range m.pending {
			if r.deadline <= eff && !(r.inFire && r.due) {
				t.Fatalf("timer %d (deadline %d, inFire %v) still pending after Advance(%d)", r.id, r.deadline, r.inFire, eff)
			}
			if r.deadline <= eff {
				continue
			}
		}
		if m.w.Now() != eff {
			t.Fatalf("Now %d, want %d", m.w.Now(), eff)
		}
	}
	for _, r := range m.pending {
		r.inFire = false
	}
}

func ids(rs []*reTimer) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.id
	}
	return out
}

func (m *reMachine) Check(t *rapid.T) {
	if err := m.w.CheckInvariants(); err != nil {
		t.Fatalf("invariant: %v", err)
	}
	if m.w.Len() != len(m.pending) {
		t.Fatalf("Len %d, want %d", m.w.Len(), len(m.pending))
	}
	e, ok := m.w.NextExpiry()
	if ok != (len(m.pending) > 0) {
		t.Fatalf("NextExpiry ok=%v with %d pending", ok, len(m.pending))
	}
	for _, r := range m.pending {
		if r.deadline < e {
			t.Fatalf("NextExpiry %d after deadline %d of %d", e, r.deadline, r.id)
		}
		if d, ok := m.w.Deadline(m.handles[r.id]); !ok || d != r.deadline {
			t.Fatalf("Deadline(%d) = %d,%v", r.id, d, ok)
		}
	}
}

func TestWheelReentrant(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var start int64
		if rapid.Bool().Draw(t, "rs") {
			start = rapid.Int64().Draw(t, "start")
		} else {
			start = rapid.SampledFrom(startClocks).Draw(t, "start")
		}
		m := &reMachine{w: timers.New[int](start), pending: map[int]*reTimer{}, refine: math.MaxInt64}
		t.Repeat(map[string]func(*rapid.T){
			"Arm": m.Arm, "Arm2": m.Arm, "Arm3": m.Arm, "Cancel": m.Cancel,
			"Advance": m.Advance, "Refine": m.Refine, "Clear": m.Clear, "": m.Check,
		})
	})
}

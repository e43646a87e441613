package timers_test

import (
	"math"
	"slices"
	"testing"

	"github.com/colonyrt/colony/timers"
)

// advance runs w.Advance(now) and returns the fired values in order.
func advance[T any](t *testing.T, w *timers.Wheel[T], now int64) []T {
	t.Helper()
	var got []T
	w.Advance(now, func(v T) { got = append(got, v) })
	check(t, w)
	return got
}

func check[T any](t *testing.T, w *timers.Wheel[T]) {
	t.Helper()
	if err := w.CheckInvariants(); err != nil {
		t.Fatalf("invariant: %v", err)
	}
}

func expect[T comparable](t *testing.T, got []T, want ...T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}

func TestZeroWheel(t *testing.T) {
	var w timers.Wheel[string]
	if w.Len() != 0 || w.Now() != math.MinInt64 {
		t.Fatalf("zero Wheel: Len %d Now %d", w.Len(), w.Now())
	}
	if _, ok := w.NextExpiry(); ok {
		t.Fatal("zero Wheel has a next expiry")
	}
	if w.Cancel(timers.Handle{}) {
		t.Fatal("Cancel(zero Handle) = true")
	}
	if _, ok := w.Deadline(timers.Handle{}); ok {
		t.Fatal("Deadline(zero Handle) pending")
	}
	w.Arm(-5, "a")
	w.Arm(10, "b")
	expect(t, advance(t, &w, -6))
	expect(t, advance(t, &w, 9), "a")
	expect(t, advance(t, &w, 10), "b")
	check(t, &w)
}

func TestDeadlineOrderAndTies(t *testing.T) {
	w := timers.New[int](1000)
	// Deadlines spread over several levels, armed out of order, with ties.
	ds := []int64{5000, 1001, 70000, 1063, 1064, 1001, 5000, 1 << 30, 4096 + 1000, 1064}
	for i, d := range ds {
		w.Arm(d, i)
	}
	got := advance(t, w, 1<<31)
	// Deadline order, equal deadlines in arm order.
	expect(t, got, 1, 5, 3, 4, 9, 0, 6, 8, 2, 7)
}

func TestOverdueFiresAtNextAdvanceInArmOrder(t *testing.T) {
	w := timers.New[string](100)
	w.Arm(50, "past")
	w.Arm(100, "now")
	w.Arm(math.MinInt64, "min")
	w.Arm(101, "future")
	if w.Len() != 4 {
		t.Fatalf("Len = %d", w.Len())
	}
	if e, ok := w.NextExpiry(); !ok || e > math.MinInt64 {
		t.Fatalf("NextExpiry = %d, %v; want <= MinInt64 (an overdue timer)", e, ok)
	}
	// Advancing to the same time fires the overdue ones, in arm order,
	// but not the future one.
	expect(t, advance(t, w, 100), "past", "now", "min")
	expect(t, advance(t, w, 100))
	expect(t, advance(t, w, 101), "future")
}

func TestNeverEarly(t *testing.T) {
	w := timers.New[int64](0)
	for _, d := range []int64{1, 63, 64, 65, 4095, 4096, 4097, 1<<18 + 7} {
		w.Arm(d, d)
	}
	for now := int64(0); now <= 1<<18+8; now++ {
		w.Advance(now, func(d int64) {
			if d != now {
				t.Fatalf("timer for %d fired at %d", d, now)
			}
		})
	}
	if w.Len() != 0 {
		t.Fatalf("Len = %d after all fired", w.Len())
	}
	check(t, w)
}

func TestNextExpiryBound(t *testing.T) {
	w := timers.New[int](0)
	if _, ok := w.NextExpiry(); ok {
		t.Fatal("empty wheel has a next expiry")
	}
	h := w.Arm(1000, 1) // level 1 (1000 = 15*64 + 40): bound is 960
	if e, _ := w.NextExpiry(); e != 960 {
		t.Fatalf("NextExpiry = %d, want 960", e)
	}
	w.Arm(40, 2) // same 64 ms block as the clock: exact
	if e, _ := w.NextExpiry(); e != 40 {
		t.Fatalf("NextExpiry = %d, want 40", e)
	}
	expect(t, advance(t, w, 40), 2)
	// The timekeeper's loop: sleep to the bound, advance, repeat.
	e, _ := w.NextExpiry()
	expect(t, advance(t, w, e)) // 960: refines the timer to level 0
	if e, _ = w.NextExpiry(); e != 1000 {
		t.Fatalf("after refining NextExpiry = %d, want 1000", e)
	}
	if d, ok := w.Deadline(h); !ok || d != 1000 {
		t.Fatalf("Deadline = %d, %v after refining", d, ok)
	}
	expect(t, advance(t, w, 1000), 1)
	if _, ok := w.NextExpiry(); ok {
		t.Fatal("next expiry after all fired")
	}
}

func TestStaleHandles(t *testing.T) {
	w := timers.New[int](0)
	h1 := w.Arm(10, 1)
	if d, ok := w.Deadline(h1); !ok || d != 10 {
		t.Fatalf("Deadline = %d, %v", d, ok)
	}
	if !w.Cancel(h1) {
		t.Fatal("first Cancel = false")
	}
	if w.Cancel(h1) {
		t.Fatal("second Cancel = true")
	}
	// The node is reused: the old handle must not reach the new timer.
	h2 := w.Arm(20, 2)
	if h1 == h2 {
		t.Fatal("reused node gave an equal Handle")
	}
	if w.Cancel(h1) {
		t.Fatal("stale Cancel on a reused node = true")
	}
	if _, ok := w.Deadline(h1); ok {
		t.Fatal("stale Deadline on a reused node reports pending")
	}
	if w.Len() != 1 {
		t.Fatalf("Len = %d", w.Len())
	}
	expect(t, advance(t, w, 20), 2)
	if w.Cancel(h2) {
		t.Fatal("Cancel after fire = true")
	}
	// A handle from another wheel is at worst out of range.
	other := timers.New[int](0)
	for range 100 {
		other.Arm(5, 0)
	}
	if w.Cancel(other.Arm(5, 0)) {
		t.Fatal("foreign handle cancelled a timer")
	}
	check(t, w)
}

func TestClockNeverGoesBack(t *testing.T) {
	w := timers.New[int](1000)
	w.Arm(1001, 1)
	expect(t, advance(t, w, 10))
	if w.Now() != 1000 {
		t.Fatalf("Now = %d after advancing backwards", w.Now())
	}
	w.Arm(999, 2) // overdue relative to the wheel's clock
	expect(t, advance(t, w, 500), 2)
	expect(t, advance(t, w, 1001), 1)
}

func TestExtremes(t *testing.T) {
	w := timers.New[int](math.MinInt64)
	w.Arm(math.MaxInt64, 3)
	w.Arm(0, 2)
	w.Arm(-1, 1)
	w.Arm(math.MinInt64, 0) // overdue at once
	if e, _ := w.NextExpiry(); e != math.MinInt64 {
		t.Fatalf("NextExpiry = %d", e)
	}
	expect(t, advance(t, w, math.MinInt64), 0)
	if e, _ := w.NextExpiry(); e > -1 {
		t.Fatalf("NextExpiry = %d, after the earliest deadline -1", e)
	}
	expect(t, advance(t, w, -1), 1)
	expect(t, advance(t, w, math.MaxInt64-1), 2)
	if e, _ := w.NextExpiry(); e != math.MaxInt64 {
		// MaxInt64 is in the same 64 ms block as the clock now: exact.
		t.Fatalf("NextExpiry = %d, want MaxInt64", e)
	}
	expect(t, advance(t, w, math.MaxInt64), 3)
	// Time ends at MaxInt64: anything armed now is overdue.
	w.Arm(math.MaxInt64, 4)
	expect(t, advance(t, w, math.MaxInt64), 4)
}

func TestReentrantFire(t *testing.T) {
	w := timers.New[string](0)
	h := map[string]timers.Handle{}
	h["a"] = w.Arm(10, "a")
	h["b"] = w.Arm(10, "b")
	h["c"] = w.Arm(30, "c")
	var got []string
	w.Advance(100, func(v string) {
		got = append(got, v)
		switch v {
		case "a":
			if !w.Cancel(h["b"]) { // same slot, not yet fired
				t.Error("Cancel(b) from fire = false")
			}
			w.Arm(5, "overdue")  // before the deadline being fired: next Advance
			w.Arm(20, "later")   // after it, at or before now: this Advance
			w.Arm(200, "future") // after now
		case "later":
			if w.Cancel(h["a"]) {
				t.Error("Cancel(a) after it fired = true")
			}
		}
	})
	check(t, w)
	expect(t, got, "a", "later", "c")
	expect(t, advance(t, w, 100), "overdue")
	expect(t, advance(t, w, 200), "future")
}

func TestAdvanceFromFirePanics(t *testing.T) {
	w := timers.New[int](0)
	w.Arm(1, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("Advance from fire did not panic")
		}
		check(t, w)
	}()
	w.Advance(5, func(int) { w.Advance(6, func(int) {}) })
}

func TestNilFirePanics(t *testing.T) {
	w := timers.New[int](0)
	defer func() {
		if recover() == nil {
			t.Fatal("Advance(nil) did not panic")
		}
	}()
	w.Advance(1, nil)
}

// A panic in fire leaves the wheel consistent: the timer being fired counts
// as fired, the rest stay pending and fire at the next Advance, in order.
func TestPanicInFire(t *testing.T) {
	for _, tc := range []struct {
		name  string
		arm   func(w *timers.Wheel[int])
		now   int64
		after []int
	}{
		{"overdue", func(w *timers.Wheel[int]) {
			for i := range 4 {
				w.Arm(-int64(i), i)
			}
		}, 0, []int{1, 2, 3, 9}},
		{"level0", func(w *timers.Wheel[int]) {
			for i := range 4 {
				w.Arm(7, i)
			}
		}, 7, []int{1, 2, 3, 9}},
		{"coarse", func(w *timers.Wheel[int]) {
			w.Arm(64*64, 0)
			w.Arm(64*64, 1)
			w.Arm(64*64+5, 2)
			w.Arm(64*64+64*3, 3)
		}, 1 << 20, []int{1, 9, 2, 3}},
		{"ahead", func(w *timers.Wheel[int]) {
			w.Arm(64*64, 0) // level 2, slot 1: refined ahead onto the ahead list
			w.Arm(64*64, 1)
			w.Advance(64*64-8*64, func(int) {}) // into Refine's run-up
			for r := w.Refine(1); r != math.MaxInt64; r = w.Refine(1) {
				w.Advance(r, func(int) {}) // nothing is due before 64*64
			}
			w.Arm(64*64+5, 2) // armed since: left in the source slot
			w.Arm(64*64+64*3, 3)
		}, 1 << 20, []int{1, 9, 2, 3}}, // ahead-list leftovers go before the due list, as in step 1
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := timers.New[int](0)
			tc.arm(w)
			func() {
				defer func() {
					if recover() == nil {
						t.Fatal("no panic")
					}
				}()
				w.Advance(tc.now, func(v int) {
					w.Arm(-100, 9) // armed overdue from fire, before the panic
					panic(v)
				})
			}()
			check(t, w)
			if w.Len() != 4 {
				t.Fatalf("Len = %d after a panic in fire, want 4", w.Len())
			}
			// The panicking timer's ties (due, not yet fired) go back to
			// the front of the due list, ahead of the one armed from fire.
			expect(t, advance(t, w, tc.now), tc.after...)
		})
	}
}

func TestNoAllocSteadyState(t *testing.T) {
	w := timers.New[int](0)
	hs := make([]timers.Handle, 1000)
	for i := range hs {
		hs[i] = w.Arm(int64(i*37%5000), i)
	}
	for _, h := range hs {
		w.Cancel(h)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range hs {
			hs[i] = w.Arm(int64(i*37%5000), i)
		}
		for _, h := range hs {
			w.Cancel(h)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 1000 arm+cancel in steady state", allocs)
	}
	n := 0
	fire := func(int) { n++ }
	allocs = testing.AllocsPerRun(10, func() {
		for i := range hs {
			hs[i] = w.Arm(w.Now()+int64(i*37%5000), i)
		}
		w.Advance(w.Now()+5000, fire)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 1000 arm+fire in steady state", allocs)
	}
}

// TestManyChunks arms more timers than one storage chunk holds (1024), with
// cancels and node reuse across chunk boundaries, and checks that exactly
// the live ones fire, in deadline order, and that the node count stays at
// its high-water mark once nodes are recycled.
func TestManyChunks(t *testing.T) {
	const n = 5000
	w := timers.New[int](0)
	hs := make([]timers.Handle, n)
	for i := range hs {
		hs[i] = w.Arm(int64(1+(i*7919)%n), i) // distinct deadlines 1..n
	}
	for i := 0; i < n; i += 3 {
		if !w.Cancel(hs[i]) {
			t.Fatalf("cancel %d: not pending", i)
		}
	}
	check(t, w)
	high := w.Nodes()
	for i := 0; i < n; i += 3 { // reuse the freed nodes, deadlines after the rest
		hs[i] = w.Arm(int64(n+1+i), i)
	}
	if w.Nodes() != high {
		t.Fatalf("nodes grew from %d to %d with %d free nodes to reuse", high, w.Nodes(), (n+2)/3)
	}
	check(t, w)
	got := advance(t, w, 2*n)
	if len(got) != n {
		t.Fatalf("fired %d timers, want %d", len(got), n)
	}
	last := int64(-1)
	for _, i := range got {
		d := int64(1 + (i*7919)%n)
		if i%3 == 0 {
			d = int64(n + 1 + i)
		}
		if d <= last {
			t.Fatalf("timer %d (deadline %d) fired after deadline %d", i, d, last)
		}
		last = d
	}
}

// TestRefineAhead: Refine moves a coarse slot's timers ahead of its start in
// budgeted steps, asks to be called at the right times, and changes nothing
// that fires: the crossing fires in deadline order, ties in arm order,
// timers armed into the slot after the refining included.
func TestRefineAhead(t *testing.T) {
	const S = 64 * 64 // start of level-2 slot 1 from a clock of 0
	w := timers.New[int](0)
	var ds []int64
	arm := func(d int64) {
		w.Arm(d, len(ds))
		ds = append(ds, d)
	}
	for i := range 3000 {
		arm(S + int64(i*7)%S)
	}
	arm(S)
	arm(10) // level 0: not Refine's business
	const open = S - 8*64
	if got := w.Refine(100); got != open {
		t.Fatalf("Refine before the window = %d, want %d (eight level-1 slots ahead of %d)", got, open, S)
	}
	check(t, w)
	expect(t, advance(t, w, open), 3001)
	// Paced steps of 100 over the run-up, which ends one level-1 slot
	// before S; the clock follows what Refine asks for.
	steps := 0
	for r := w.Refine(100); r != math.MaxInt64; r = w.Refine(100) {
		check(t, w)
		if steps++; steps > 100 {
			t.Fatal("Refine(100) does not finish 3001 timers")
		}
		if r < w.Now() || r >= S-64 {
			t.Fatalf("step %d: Refine asks to be called at %d (clock %d, run-up ends at %d)", steps, r, w.Now(), S-64)
		}
		if r == w.Now() && steps > 1 {
			t.Fatalf("step %d: paced steps should be spread, not due at once", steps)
		}
		expect(t, advance(t, w, r)) // nothing fires before S
	}
	if steps != 30 {
		t.Fatalf("Refine(100) took %d paced steps after the first for 3001 timers, want 30", steps)
	}
	if got := w.Refine(100); got != math.MaxInt64 {
		t.Fatalf("Refine after the work = %d, want MaxInt64", got)
	}
	arm(S + 5) // armed after the refining: behind timer 5/7's tie
	arm(S)
	if e, ok := w.NextExpiry(); !ok || e != S {
		t.Fatalf("NextExpiry = %d, %v; want %d", e, ok, S)
	}
	got := advance(t, w, 2*S)
	want := make([]int, 0, len(ds))
	for i := range ds {
		if i != 3001 {
			want = append(want, i)
		}
	}
	slices.SortStableFunc(want, func(a, b int) int { return int(ds[a] - ds[b]) })
	expect(t, got, want...)
}

// TestArmFromFireOrder: a timer armed from fire fires after every pending
// timer of equal deadline, whether they are still in a coarse slot being
// drained or in the source slot at a Refine crossing (found in review: both
// fired the newer timer first).
func TestArmFromFireOrder(t *testing.T) {
	// Crossing: B refined ahead, A left in the source slot.
	const S = 3 << 12
	w := timers.New[int](0)
	w.Arm(S, 0)                     // B
	w.Advance(S-8*64, func(int) {}) // into the run-up
	w.Refine(1)                     // B -> the ahead list
	w.Arm(S+5, 1)                   // A, stays in the source slot
	var got []int
	w.Advance(S+5, func(v int) {
		got = append(got, v)
		if v == 0 {
			w.Arm(S+5, 2) // C, armed after A
		}
	})
	check(t, w)
	expect(t, got, 0, 1, 2)
	// Plain drain of a level-1 slot.
	w = timers.New[int](0)
	w.Arm(64, 0)
	w.Arm(69, 1)
	got = nil
	w.Advance(69, func(v int) {
		got = append(got, v)
		if v == 0 {
			w.Arm(69, 2)
		}
	})
	check(t, w)
	expect(t, got, 0, 1, 2)
}

// TestRefineDropsAnEmptiedTarget: when every timer of the slot being
// refined ahead is cancelled, Refine moves on to the next coarse slot
// instead of idling until the emptied one is crossed.
func TestRefineDropsAnEmptiedTarget(t *testing.T) {
	const S = 64 * 64 // level-2 slot 1 from a clock of 0
	w := timers.New[int](0)
	h := w.Arm(S+3, 0)
	expect(t, advance(t, w, S-8*64)) // into slot 1's run-up
	w.Refine(1)                      // h moves ahead
	if !w.Cancel(h) {
		t.Fatal("cancel of a timer refined ahead")
	}
	w.Arm(2*S+7, 1) // level-2 slot 2
	if got := w.Refine(1); got != 2*S-8*64 {
		t.Fatalf("Refine = %d, want slot 2's run-up at %d", got, 2*S-8*64)
	}
	check(t, w)
	expect(t, advance(t, w, 2*S+7), 1)
}

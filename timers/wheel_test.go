package timers_test

import (
	"cmp"
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
// drained or in the source slot at a Refine crossing (both could fire the
// newer timer first).
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

// keep runs the timekeeper's loop on w until nothing is pending: sleep until
// the earlier of NextExpiry and what Refine asked for, Advance, then Refine
// until it asks for a later time. It fails if an Advance would reach the
// start of a coarse slot whose timers were not refined ahead (the stall
// Refine exists to avoid), and returns what fired, in order.
func keep(t *testing.T, w *timers.Wheel[int], refine int64, budget int) []int {
	t.Helper()
	var got []int
	for w.Len() > 0 {
		e, _ := w.NextExpiry()
		wake := min(e, refine)
		if start, vals, _, ok := w.Backlog(); ok && start <= wake {
			t.Fatalf("clock %d: the Advance to %d crosses the coarse slot at %d with %d timers not refined ahead", w.Now(), wake, start, len(vals))
		}
		got = append(got, advance(t, w, wake)...)
		for calls := 0; ; calls++ {
			if calls > 2*w.Len()+2 { // each call moves a timer ahead or back
				t.Fatalf("Refine(%d) still due after %d calls", budget, calls)
			}
			if refine = w.Refine(budget); refine > w.Now() {
				break
			}
		}
		check(t, w)
	}
	return got
}

// inOrder returns the ids 0..len(ds)-1 in the order they must fire: by
// deadline, ties in arm (id) order.
func inOrder(ds []int64) []int {
	want := make([]int, len(ds))
	for i := range want {
		want[i] = i
	}
	slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(ds[a], ds[b]) })
	return want
}

// TestRefineRetargets: while Refine works on a level-3 slot, timers armed
// since fill an earlier level-2 slot. Refine switches to that one, so it is
// refined before its start instead of crossed in one go (as it would be if
// Refine stayed on the level-3 slot until it was crossed), and then
// finishes the level-3 slot; nothing fires differently, ties included.
func TestRefineRetargets(t *testing.T) {
	const (
		L2   = 64 * 64 // one level-2 slot
		S    = 64 * L2 // level-3 slot 1 from a clock of 0
		open = S - 8*L2
	)
	w := timers.New[int](0)
	var ds []int64
	arm := func(d int64) {
		w.Arm(d, len(ds))
		ds = append(ds, d)
	}
	for i := range 600 { // some due in the first level-2 slot of S's block, ties included
		arm(S + int64(i*37)%(3*L2/2))
	}
	arm(S)
	arm(S + 5)
	expect(t, advance(t, w, open))
	w.Refine(200) // the level-3 slot is the target; a third of it moves ahead
	check(t, w)
	for i := range 1000 { // an earlier coarse slot: level 2, slot 60
		arm(60*L2 + int64(i*7)%L2)
	}
	arm(S) // ties with timers refined ahead, or moved back
	arm(S + 5)
	arm(S + 37)
	got := keep(t, w, w.Refine(0), 100)
	expect(t, got, inOrder(ds)...)
}

// TestNextRefine: Arms that fill the coarse slot crossed next, ahead of
// what Refine last planned for, to 64 timers report that slot's run-up
// through NextRefine (at or before Now if it has begun), so that a
// timekeeper that lowers its wake-up after each Arm to min(deadline,
// NextRefine) refines the slot in time (lowered only to the deadline, it
// would sleep past the run-up and cross the slot in one go). Other Arms leave NextRefine alone, and Refine resets it.
func TestNextRefine(t *testing.T) {
	const L2 = 64 * 64 // one level-2 slot
	t.Run("reports", func(t *testing.T) { testNextRefineReports(t, L2) })
	// The timekeeper, with and without the report: 300 timers armed into
	// an empty wheel, in level-2 slot 9. Lowering its wake-up only to the
	// deadlines, it would sleep until 9*L2 and cross the slot in one go.
	t.Run("timekeeper", func(t *testing.T) {
		w := timers.New[int](8 * L2)
		next := w.Refine(0) // nothing to do: MaxInt64
		var ds []int64
		for i := range 300 {
			d := 9*L2 + int64(i*13)%L2
			w.Arm(d, i)
			ds = append(ds, d)
			next = min(next, d, w.NextRefine())
		}
		if next != 9*L2-8*64 {
			t.Errorf("the timekeeper would sleep until %d, want slot 9's run-up at %d", next, 9*L2-8*64)
		}
		expect(t, keep(t, w, next, 50), inOrder(ds)...)
	})
}

func testNextRefineReports(t *testing.T, L2 int64) {
	w := timers.New[int](0)
	want := func(what string, r int64) {
		t.Helper()
		if got := w.NextRefine(); got != r {
			t.Fatalf("%s: NextRefine = %d, want %d", what, got, r)
		}
	}
	fill := func(d int64, n int) { // n timers from d on, 64 ticks apart
		for i := range n {
			w.Arm(d+int64(i%64)*64, 0)
		}
	}
	want("empty", math.MaxInt64)
	for range 64 {
		w.Arm(10, 0)   // level 0
		w.Arm(L2-1, 0) // level 1
	}
	want("levels 0 and 1", math.MaxInt64)
	fill(5*L2+3, 63)
	want("63 timers in level-2 slot 5, the next coarse slot", math.MaxInt64)
	fill(5*L2+3, 1)
	want("64 timers in slot 5", 5*L2-8*64)
	fill(5*L2+3, 64)
	fill(7*L2, 64)
	fill(64*L2+1, 64)
	want("slot 5 again, a later one, one of level 3", 5*L2-8*64)
	fill(3*L2+1, 64)
	want("an earlier slot", 3*L2-8*64)
	if r := w.Refine(0); r != 3*L2-8*64 {
		t.Fatalf("Refine(0) = %d, want %d", r, 3*L2-8*64)
	}
	want("after Refine", math.MaxInt64)

	// Slot 3 is the target; Arms that fill its source slot again, once
	// Refine has emptied it, are left to the next Refine.
	if got := advance(t, w, 3*L2-8*64); len(got) != 128 {
		t.Fatalf("%d fired, want the 128 of levels 0 and 1", len(got))
	}
	if r := w.Refine(100); r != math.MaxInt64 {
		t.Fatalf("Refine = %d after moving the 64 timers of slot 3", r)
	}
	fill(3*L2+2, 64)
	want("the target's source slot again", math.MaxInt64)
	// Once the target is crossed, a slot ahead of slot 5 whose run-up has
	// begun is reported as due at once.
	if got := advance(t, w, 4*L2-50); len(got) != 128 {
		t.Fatalf("%d fired, want the 128 of slot 3", len(got))
	}
	if r := w.Refine(0); r != 5*L2-8*64 {
		t.Fatalf("Refine(0) = %d, want slot 5's run-up at %d", r, 5*L2-8*64)
	}
	fill(4*L2+5, 64)
	want("slot 4, its run-up begun", 4*L2-8*64)
	check(t, w)
}

// TestRefineMovesBackInSteps: when an earlier slot takes over from a target
// that has already moved timers into the idle levels the new one needs,
// those go back to the target's source slot in steps of Refine's budget
// (in one go, 100k of them took as long as the crossing Refine avoids),
// and then the new target is refined; ties keep their arm order.
func TestRefineMovesBackInSteps(t *testing.T) {
	const (
		L2   = 64 * 64 // one level-2 slot
		S    = 64 * L2 // level-3 slot 1 from a clock of 0
		S2   = 60 * L2 // an earlier level-2 slot
		open = S2 - 8*64
	)
	w := timers.New[int](0)
	var ds []int64
	arm := func(d int64) {
		w.Arm(d, len(ds))
		ds = append(ds, d)
	}
	for i := range 700 { // levels 0 and 1 once the clock is at S
		arm(S + 1 + int64(i*61)%(L2-1))
	}
	for range 250 { // one list longer than the budget: ties split across steps
		arm(S + 7)
	}
	for range 50 {
		arm(S + 100)
	}
	expect(t, advance(t, w, S-8*L2))
	if r := w.Refine(5000); r != math.MaxInt64 {
		t.Fatalf("Refine = %d, want all moved ahead at once", r)
	}
	arm(S + 1) // ties, armed after the refining
	arm(S + 7)
	arm(S2 + 3)
	expect(t, advance(t, w, open))
	for want := 900; want >= 0; want -= 100 {
		if r := w.Refine(100); r != w.Now() {
			t.Fatalf("Refine = %d while moving back, want %d (at once)", r, w.Now())
		}
		check(t, w)
		if got := w.MovingBack(); got != want {
			t.Fatalf("%d timers left to move back, want %d", got, want)
		}
	}
	if r := w.Refine(100); r != math.MaxInt64 { // slot S2's one timer
		t.Fatalf("Refine = %d after moving back, want MaxInt64", r)
	}
	arm(S + 1)
	expect(t, keep(t, w, w.Refine(0), 100), inOrder(ds)...)
}

// TestRefineNestedTargets drives the rarer paths of retargeting: a level-4
// target overtaken by a level-3 slot, which is overtaken in turn by a
// level-2 slot while timers are still moving back; an Advance that reaches
// a target's start while timers are moving back (Refine asked to be called
// at once and was not); and a new target whose timers are all cancelled
// while the old one's move back, which then keeps them.
func TestRefineNestedTargets(t *testing.T) {
	const (
		L2 = 64 * 64
		L3 = 64 * L2
		S4 = 64 * L3   // level-4 slot 1 from a clock of 0
		S3 = 60 * L3   // an earlier level-3 slot
		S2 = S3 - 2*L2 // an earlier level-2 slot still
		o4 = S4 - 8*L3 // their run-ups
		o3 = S3 - 8*L2
		o2 = S2 - 8*64
	)
	setup := func(t *testing.T) (*timers.Wheel[int], func(int64) timers.Handle, *[]int64) {
		w := timers.New[int](0)
		ds := new([]int64)
		arm := func(d int64) timers.Handle {
			h := w.Arm(d, len(*ds))
			*ds = append(*ds, d)
			return h
		}
		for i := range 300 { // idle levels 0, 1 and 2 once refined ahead of S4
			arm(S4 + 1 + int64(i*i*97)%(3*L2))
			arm(S4 + int64(i%5)*L3/4) // and level 3, and ties
		}
		expect(t, advance(t, w, o4))
		if r := w.Refine(1000); r != math.MaxInt64 {
			t.Fatalf("Refine = %d, want all of S4 moved ahead", r)
		}
		return w, arm, ds
	}
	t.Run("overtaken twice", func(t *testing.T) {
		w, arm, ds := setup(t)
		for i := range 50 {
			arm(S3 + int64(i*7)%L2)
		}
		expect(t, advance(t, w, o3))
		if r := w.Refine(30); r != w.Now() || w.MovingBack() == 0 {
			t.Fatalf("Refine = %d at %d with %d left to move back: want S4's levels below 3 moving back", r, w.Now(), w.MovingBack())
		}
		left := w.MovingBack()
		for i := range 20 {
			arm(S2 + int64(i*5)%L2)
			arm(S4 + 1) // ties with timers moving back
		}
		expect(t, advance(t, w, o2))
		if r := w.Refine(30); r != w.Now() || w.MovingBack() != left-30 {
			t.Fatalf("Refine = %d at %d with %d left to move back, want %d", r, w.Now(), w.MovingBack(), left-30)
		}
		check(t, w)
		expect(t, keep(t, w, w.Now(), 30), inOrder(*ds)...)
	})
	t.Run("crossed while moving back", func(t *testing.T) {
		w, arm, ds := setup(t)
		arm(S3 + 9)
		expect(t, advance(t, w, o3))
		w.Refine(10)
		if w.MovingBack() == 0 {
			t.Fatal("nothing moving back")
		}
		arm(S4 + 1)
		expect(t, advance(t, w, S4+L3), inOrder(*ds)...)
	})
	t.Run("new target cancelled", func(t *testing.T) {
		w, arm, ds := setup(t)
		h := arm(S3 + 9)
		expect(t, advance(t, w, o3))
		w.Refine(10)
		left := w.MovingBack()
		if left == 0 || !w.Cancel(h) {
			t.Fatal("nothing moving back, or the new target's timer not pending")
		}
		if r := w.Refine(10); w.MovingBack() != 0 || r != math.MaxInt64 {
			t.Fatalf("Refine = %d with %d left to move back: want the S4 target whole again, with nothing to do", r, w.MovingBack())
		}
		check(t, w)
		got := keep(t, w, math.MaxInt64, 10)
		want := inOrder(*ds)
		want = slices.DeleteFunc(want, func(i int) bool { return i == len(*ds)-1 })
		expect(t, got, want...)
	})
}

// keepPaced runs the runtime's timekeeper on w, as keep does, but with the
// clock moving: each wake it Advances and calls Refine once, and if Refine
// asks to be called again at once, the next wake is a tick later (polls
// are not free). next is what the timekeeper sleeps until. It fails if an
// Advance crosses a coarse slot with more than budget timers not yet
// refined ahead, and returns what fired, in order.
func keepPaced(t *testing.T, w *timers.Wheel[int], next int64, budget int) []int {
	t.Helper()
	var got []int
	for w.Len() > 0 {
		wake := max(next, w.Now())
		if start, vals, _, ok := w.Backlog(); ok && start <= wake && len(vals) > budget {
			t.Fatalf("clock %d: the Advance to %d crosses the coarse slot at %d with %d timers not refined ahead", w.Now(), wake, start, len(vals))
		}
		got = append(got, advance(t, w, wake)...)
		r := w.Refine(budget)
		e, ok := w.NextExpiry()
		if !ok {
			e = math.MaxInt64
		}
		next = min(e, r)
		if next <= w.Now() {
			next = w.Now() + 1
		}
		check(t, w)
	}
	return got
}

// TestNextRefineBehindAnotherSlot: Arms that fill a coarse slot crossed
// after another coarse slot or a target report, through NextRefine, when
// Refine can start on it: its run-up, or the crossing of the slot before
// it if that is later, although Refine's last answer covered the slot
// before: that slot may be new too (armed since, with fewer than 64
// timers, so not reported), or the runtime may have forgotten that answer
// (it resets its next when the last pending timer is cancelled), and a
// timekeeper that lowered its wake-up only to the deadlines would sleep
// until the first of them and cross the filled slot all but unrefined.
func TestNextRefineBehindAnotherSlot(t *testing.T) {
	const (
		L2 = 64 * 64 // one level-2 slot
		L3 = 64 * L2 // one level-3 slot
	)
	// fill arms 300 timers in [from, from+L2) and lowers next as the
	// runtime does after each Arm.
	fill := func(w *timers.Wheel[int], next *int64, from int64, ds *[]int64) {
		for i := range 300 {
			d := from + int64(i*13)%L2
			w.Arm(d, len(*ds))
			*ds = append(*ds, d)
			*next = min(*next, d, w.NextRefine())
		}
	}
	t.Run("behind a new small slot", func(t *testing.T) {
		w := timers.New[int](0)
		next := w.Refine(0) // nothing to do: MaxInt64
		ds := []int64{L3 - 1}
		w.Arm(ds[0], 0) // level-2 slot 63: one timer, unreported
		next = min(next, ds[0], w.NextRefine())
		fill(w, &next, L3, &ds) // level-3 slot 1, run-up from L3 - 8*L2
		if next > L3-L2 {
			t.Errorf("the timekeeper would sleep until %d, past %d, when Refine can start on the level-3 slot", next, L3-L2)
		}
		expect(t, keepPaced(t, w, next, 50), inOrder(ds)...)
	})
	t.Run("behind an emptied target", func(t *testing.T) {
		w := timers.New[int](0)
		h := w.Arm(5*L2+3, -1)
		expect(t, advance(t, w, 5*L2-8*64))
		if r := w.Refine(100); r != math.MaxInt64 { // slot 5 is a target, its timer moved
			t.Fatalf("Refine = %d", r)
		}
		w.Cancel(h)
		next := int64(math.MaxInt64) // the runtime's next, with nothing pending
		var ds []int64
		fill(w, &next, 7*L2, &ds)
		if next > 7*L2-8*64 {
			t.Errorf("the timekeeper would sleep until %d, past slot 7's run-up at %d", next, 7*L2-8*64)
		}
		expect(t, keepPaced(t, w, next, 50), inOrder(ds)...)
	})
	t.Run("behind a refilled target", func(t *testing.T) {
		w := timers.New[int](0)
		h := w.Arm(5*L2+3, -1)
		expect(t, advance(t, w, 5*L2-8*64))
		if r := w.Refine(100); r != math.MaxInt64 {
			t.Fatalf("Refine = %d", r)
		}
		w.Cancel(h)
		next := int64(math.MaxInt64)
		ds := []int64{6*L2 - 1} // in the target's source slot again
		w.Arm(ds[0], 0)
		next = min(next, ds[0], w.NextRefine())
		fill(w, &next, 6*L2, &ds)
		if next > 6*L2-8*64 {
			t.Errorf("the timekeeper would sleep until %d, past slot 6's run-up at %d", next, 6*L2-8*64)
		}
		expect(t, keepPaced(t, w, next, 50), inOrder(ds)...)
	})
}

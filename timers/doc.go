// Package timers is a hierarchical timing wheel: the data structure behind
// Colony's timers (send_after, receive ... after, call timeouts). It is pure:
// no goroutines and no clock of its own.
//
// # Time
//
// Time is an int64 count of ticks, in a unit and on an epoch the caller
// chooses (for example a monotonic reading divided by the tick); one tick is
// the wheel's resolution. The actor runtime uses a tick of 2^16 ns (about
// 65.5 us); the examples and tests here read a tick as 1 ms. Negative times
// are fine. The wheel has a clock of its own only in the sense that it
// remembers the largest time it was given (Now); a smaller time passed to
// Advance is treated as Now. Every int64 deadline is representable: the
// wheel's eleven 64-slot levels cover the whole 64-bit range, so no deadline
// is clamped. Callers computing now+duration should saturate at
// math.MaxInt64 rather than overflow.
//
// # Contract
//
//   - Arm(deadline, v) adds a timer and returns a Handle; O(1), and free of
//     allocation once the wheel has grown to its high-water mark of pending
//     timers (nodes are recycled).
//   - Cancel(h) removes a pending timer in O(1) and reports whether it was
//     pending. A stale Handle — already cancelled, already fired, zero, or
//     naming a node since reused for another timer — gets a clean false and
//     changes nothing: each Arm stamps the timer with a fresh 64-bit sequence
//     number that the Handle must match.
//   - Deadline(h) reports a pending timer's deadline (Erlang's read_timer).
//   - Advance(now, fire) calls fire with the value of every pending timer whose
//     deadline is at or before now, exactly once each, never for a later one.
//     Timers armed with a deadline at or before Now ("overdue") fire at the
//     next Advance, not at Arm. Order: overdue timers first, in arm order;
//     then deadline order, equal deadlines in arm order.
//   - NextExpiry() is a lower bound on the earliest pending deadline, never
//     later than it, computed from per-level occupancy bitmaps in O(1); exact
//     when that deadline is in the same aligned 64-tick block as Now. A caller
//     that sleeps until NextExpiry and then Advances may wake early (and find
//     nothing to fire) but never late.
//   - Len() is the number of pending timers.
//   - Refine(budget) does ahead of time, in paced steps, the work Advance
//     would otherwise do all at once when the clock reaches the start of a
//     coarse slot (level 2 and up), and returns when it wants to be called
//     next; it changes nothing observable. A caller that sleeps until the
//     earlier of NextExpiry and Refine's answer spreads that work out.
//   - NextRefine() reports, in O(1), when Refine must run because Arms
//     since its last call filled a coarse slot to 64 timers: the slot's
//     run-up, or the crossing of a coarse slot before it, if later. The
//     caller lowers its wake-up after each Arm to the earlier of the
//     deadline and NextRefine.
//   - Clear() drops every pending timer; every Handle issued before names
//     no timer from then on. Split and Join take a Handle apart and back, for callers that
//     store many and want to save its padding.
//
// # Concurrency
//
// A Wheel is not safe for concurrent use; the runtime guards it with its own
// lock. fire runs synchronously inside Advance, on the caller's goroutine and
// under the caller's lock, and may call Arm, Cancel, Deadline, Len,
// NextExpiry and Now, but not Advance, Refine or Clear. Each
// operation on the wheel happens before the next, by virtue of that lock;
// the wheel adds no synchronisation of its own.
//
// # Zero value
//
// The zero Wheel is empty with its clock at math.MinInt64, ready to use; New
// sets the starting clock. A Wheel must not be copied after first use. The
// zero Handle names no timer.
package timers

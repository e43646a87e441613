package monitor

// Design note: references.
//
// A monitor ref names one monitor for its whole life: Demonitor, the Down
// message and the cleanup at death all find it by ref, so a ref must never be
// handed out twice while the first could still be live, and 0 is kept free to
// mean "no ref". One atomic counter does it: Add(1) is a single instruction,
// returns a value no other caller gets, and values from one Refs increase in
// the order the Adds take effect. Rejected: per-scheduler counters with the
// scheduler id in the high bits (no contention, but refs would no longer
// increase across schedulers and the id would have to travel with every
// caller); random 64-bit refs (collisions possible, not ordered).
//
// Wrap-around: the counter wraps after 2^64 refs (584 years at one per
// nanosecond). Next skips 0 when it wraps; from then on refs neither increase
// nor are guaranteed unique. TestRefsWrap starts the counter near the top.

import "sync/atomic"

// Refs hands out refs: each Next returns a value no other Next of this Refs
// returned, larger than every value returned before it, and never 0 (until
// the counter wraps, see the note above). The zero Refs is ready to use; it
// must not be copied after first use. Safe for concurrent use.
type Refs struct {
	last atomic.Uint64 // the last ref handed out; only ever incremented
}

// Next returns a fresh ref.
func (r *Refs) Next() uint64 {
	// The Add is the whole protocol: it gives this caller a value no other
	// caller gets. Refs carry no data, so no ordering beyond that is needed.
	if ref := r.last.Add(1); ref != 0 {
		return ref
	}
	return r.last.Add(1) // wrapped past 2^64-1: 0 is never a ref
}

// processRefs backs NextRef.
var processRefs Refs

// NextRef returns a ref unique within the OS process: no two calls return
// the same value, across every Colony system the process runs.
func NextRef() uint64 { return processRefs.Next() }

package timers_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/timers"
)

const benchTimers = 1 << 20 // "1M timers"

// benchDurations returns n pseudo-random timeouts in [1, 10000] ms: the
// range of call and receive timeouts.
func benchDurations(n int) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	d := make([]int64, n)
	for i := range d {
		d[i] = 1 + r.Int64N(10000)
	}
	return d
}

// warm grows the wheel to 1M nodes before timing, so the benchmarks measure
// the steady state (nodes recycled), not the first allocation of the chunks.
func warm(w *timers.Wheel[uint64], hs []timers.Handle) {
	for i := range hs {
		hs[i] = w.Arm(w.Now()+int64(i), 0)
	}
	for _, h := range hs {
		w.Cancel(h)
	}
}

func perTimer(b *testing.B, timersPerOp int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(timersPerOp), "ns/timer")
}

// BenchmarkArmCancel: one op arms 1M timers with 1-10000 ms timeouts, then
// cancels them all, in arm order. ns/timer is the cost of one Arm + Cancel.
func BenchmarkArmCancel(b *testing.B) {
	ds := benchDurations(benchTimers)
	hs := make([]timers.Handle, benchTimers)
	w := timers.New[uint64](0)
	warm(w, hs)
	b.ReportAllocs()
	for b.Loop() {
		now := w.Now()
		for i, d := range ds {
			hs[i] = w.Arm(now+d, uint64(i))
		}
		for _, h := range hs {
			w.Cancel(h)
		}
	}
	perTimer(b, benchTimers)
}

// BenchmarkArmCancelLocked is BenchmarkArmCancel with a sync.Mutex taken
// around each operation, as the runtime will: the like-for-like comparison
// with time.AfterFunc, which is safe for concurrent use.
func BenchmarkArmCancelLocked(b *testing.B) {
	ds := benchDurations(benchTimers)
	hs := make([]timers.Handle, benchTimers)
	w := timers.New[uint64](0)
	warm(w, hs)
	var mu sync.Mutex
	b.ReportAllocs()
	for b.Loop() {
		now := w.Now()
		for i, d := range ds {
			mu.Lock()
			hs[i] = w.Arm(now+d, uint64(i))
			mu.Unlock()
		}
		for _, h := range hs {
			mu.Lock()
			w.Cancel(h)
			mu.Unlock()
		}
	}
	perTimer(b, benchTimers)
}

// BenchmarkGoAfterFuncStop: the same workload on Go's own timers.
func BenchmarkGoAfterFuncStop(b *testing.B) {
	ds := benchDurations(benchTimers)
	ts := make([]*time.Timer, benchTimers)
	f := func() {}
	for i, d := range ds { // warm-up, as for the wheel
		ts[i] = time.AfterFunc(time.Duration(d)*time.Millisecond, f)
	}
	for _, t := range ts {
		t.Stop()
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, d := range ds {
			ts[i] = time.AfterFunc(time.Duration(d)*time.Millisecond, f)
		}
		for _, t := range ts {
			t.Stop()
		}
	}
	perTimer(b, benchTimers)
}

// BenchmarkAdvance: arm n timers over 1-10000 ms, then advance the clock
// 1 ms at a time, as a timekeeper would, until all have fired. ns/timer
// includes the Arm, the refines and the fire. At 1M timers the 40 MB of
// nodes do not fit in cache and each move down a level is a cache miss.
func BenchmarkAdvance(b *testing.B) {
	for _, n := range []int{10_000, 100_000, benchTimers} {
		b.Run(sizeName(n), func(b *testing.B) {
			ds := benchDurations(n)
			w := timers.New[uint64](0)
			warm(w, make([]timers.Handle, n))
			var fired int
			fire := func(uint64) { fired++ }
			b.ReportAllocs()
			for b.Loop() {
				now := w.Now()
				for i, d := range ds {
					w.Arm(now+d, uint64(i))
				}
				for w.Len() > 0 {
					now++
					w.Advance(now, fire)
				}
			}
			perTimer(b, n)
		})
	}
}

// BenchmarkAdvanceJump: as BenchmarkAdvance, but the clock jumps past every
// deadline in one Advance (a stall): every timer is refined level by level
// so that it still fires in deadline order.
func BenchmarkAdvanceJump(b *testing.B) {
	for _, n := range []int{10_000, 100_000, benchTimers} {
		b.Run(sizeName(n), func(b *testing.B) {
			ds := benchDurations(n)
			w := timers.New[uint64](0)
			warm(w, make([]timers.Handle, n))
			fire := func(uint64) {}
			b.ReportAllocs()
			for b.Loop() {
				now := w.Now()
				for i, d := range ds {
					w.Arm(now+d, uint64(i))
				}
				w.Advance(now+10001, fire)
			}
			perTimer(b, n)
		})
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return "1M"
	case n >= 1000:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// BenchmarkArmCancelSmall: arm+cancel with a small pending population (the
// wheel and its nodes in cache): the per-call cost without memory stalls.
func BenchmarkArmCancelSmall(b *testing.B) {
	ds := benchDurations(1024)
	w := timers.New[uint64](0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h := w.Arm(ds[i&1023], 0)
		w.Cancel(h)
		i++
	}
}

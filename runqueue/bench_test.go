package runqueue

// Run-queue design (docs/benchmarks.md, "Run-queue choice"): the owner
// pushes a pid and pops it (the scheduler's hot path) while a thief on the
// other core keeps trying to steal, as an idle role does. The Local ring (Go's runq design: the owner's push
// and pop are a load and a store on its own cache line, a steal is one CAS
// for half) against a mutex-guarded ring with the same operations.

import (
	"sync"
	"sync/atomic"
	"testing"
)

func BenchmarkRunQueueLocal(b *testing.B) {
	b.Run("thief=none", func(b *testing.B) { benchLocal(b, false) })
	b.Run("thief=busy", func(b *testing.B) { benchLocal(b, true) })
}

func benchLocal(b *testing.B, withThief bool) {
	var q, thief Local
	var g Global
	stop := make(chan struct{})
	var stolen atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a thief that keeps trying, as an idle role does
		defer wg.Done()
		for withThief {
			select {
			case <-stop:
				return
			default:
			}
			if _, ok := thief.StealInto(&q); ok {
				stolen.Add(1)
				thief.Drain(func(uint64) { stolen.Add(1) })
			}
		}
	}()
	b.ResetTimer()
	for i := range b.N {
		q.Push(uint64(i)+1, &g)
		q.Pop()
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
}

// mutexRing is the lock-based alternative: the same ring behind a mutex.
type mutexRing struct {
	mu   sync.Mutex
	buf  [LocalSize]uint64
	h, n int
}

func (r *mutexRing) push(v uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == len(r.buf) {
		return false
	}
	r.buf[(r.h+r.n)%len(r.buf)] = v
	r.n++
	return true
}

func (r *mutexRing) pop() (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return 0, false
	}
	v := r.buf[r.h]
	r.h = (r.h + 1) % len(r.buf)
	r.n--
	return v, true
}

// stealHalf takes half of r's entries (at most into out).
func (r *mutexRing) stealHalf(out []uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := min((r.n+1)/2, len(out))
	for i := range k {
		out[i] = r.buf[r.h]
		r.h = (r.h + 1) % len(r.buf)
	}
	r.n -= k
	return k
}

func BenchmarkRunQueueMutex(b *testing.B) {
	b.Run("thief=none", func(b *testing.B) { benchMutex(b, false) })
	b.Run("thief=busy", func(b *testing.B) { benchMutex(b, true) })
}

func benchMutex(b *testing.B, withThief bool) {
	var q mutexRing
	var overflow Global
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var out [LocalSize / 2]uint64
		for withThief {
			select {
			case <-stop:
				return
			default:
			}
			q.stealHalf(out[:])
		}
	}()
	b.ResetTimer()
	for i := range b.N {
		if !q.push(uint64(i) + 1) {
			overflow.Push(uint64(i) + 1)
		}
		q.pop()
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
}

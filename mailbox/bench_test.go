package mailbox

// Queue design (docs/benchmarks.md, "Mailbox queue choice"): P producers
// and one consumer move b.N messages through each candidate. The lane is
// what Mailbox uses; a buffered channel blocks a sender when full (Erlang's
// send never blocks) and a mutex-guarded slice makes senders contend with
// the consumer. The consumer of the non-blocking queues yields while empty.

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

var producerCounts = []int{1, 2, 4}

func BenchmarkQueueLane(b *testing.B) {
	for _, np := range producerCounts {
		b.Run(fmt.Sprintf("producers=%d", np), func(b *testing.B) {
			var l Lane
			l.Init()
			var nc Cache
			runProducers(b, np, func(v int) { l.Push(v, nil) }, func() bool {
				_, ok := l.Pop(&nc)
				return ok
			})
		})
	}
}

func BenchmarkQueueChan(b *testing.B) {
	for _, np := range producerCounts {
		b.Run(fmt.Sprintf("producers=%d", np), func(b *testing.B) {
			ch := make(chan any, 1024)
			runProducers(b, np, func(v int) { ch <- v }, func() bool { <-ch; return true })
		})
	}
}

// mutexQueue is a mutex-guarded slice; the consumer takes the whole slice
// at once (the best case for a lock-based queue).
type mutexQueue struct {
	mu   sync.Mutex
	q    []any
	mine []any
}

func (m *mutexQueue) push(v any) {
	m.mu.Lock()
	m.q = append(m.q, v)
	m.mu.Unlock()
}

func (m *mutexQueue) pop() bool {
	if len(m.mine) == 0 {
		m.mu.Lock()
		m.q, m.mine = m.mine[:0], m.q
		m.mu.Unlock()
		if len(m.mine) == 0 {
			return false
		}
	}
	m.mine[0] = nil
	m.mine = m.mine[1:]
	return true
}

func BenchmarkQueueMutexSlice(b *testing.B) {
	for _, np := range producerCounts {
		b.Run(fmt.Sprintf("producers=%d", np), func(b *testing.B) {
			var m mutexQueue
			runProducers(b, np, func(v int) { m.push(v) }, m.pop)
		})
	}
}

// runProducers splits b.N pushes over np goroutines and pops them all on
// the benchmark's goroutine.
func runProducers(b *testing.B, np int, push func(int), pop func() bool) {
	b.ReportAllocs()
	per := b.N / np
	total := per * np
	var wg sync.WaitGroup
	for range np {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				push(i)
			}
		}()
	}
	for got := 0; got < total; {
		if pop() {
			got++
		} else {
			runtime.Gosched()
		}
	}
	wg.Wait()
}

//go:build linux

package actor_test

// Parker choice (docs/benchmarks.md, "Parker choice"). An idle scheduler
// role parks and an enqueuer wakes it; these benchmarks measure one park +
// wake round trip between two goroutines for each candidate primitive, the
// way a role and an enqueuer use it: a cap-1 channel permit (what the
// runtime uses), a mutex + sync.Cond, and a raw futex on a word.

import (
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func BenchmarkParkerChan(b *testing.B) {
	ping, pong := make(chan struct{}, 1), make(chan struct{}, 1)
	go func() {
		for range b.N {
			<-ping
			pong <- struct{}{}
		}
	}()
	for range b.N {
		ping <- struct{}{}
		<-pong
	}
}

// condPermit is a one-permit parker on a mutex and a condition variable.
type condPermit struct {
	mu   sync.Mutex
	cond sync.Cond
	set  bool
}

func newCondPermit() *condPermit {
	p := &condPermit{}
	p.cond.L = &p.mu
	return p
}

func (p *condPermit) park() {
	p.mu.Lock()
	for !p.set {
		p.cond.Wait()
	}
	p.set = false
	p.mu.Unlock()
}

func (p *condPermit) unpark() {
	p.mu.Lock()
	p.set = true
	p.mu.Unlock()
	p.cond.Signal()
}

// parker is a one-permit park/unpark pair (the candidates besides the
// channel, which is measured without the interface).
type parker interface {
	park()
	unpark()
}

// benchParkers runs b.N park + wake round trips between two goroutines.
func benchParkers(b *testing.B, ping, pong parker) {
	go func() {
		for range b.N {
			ping.park()
			pong.unpark()
		}
	}()
	for range b.N {
		ping.unpark()
		pong.park()
	}
}

func BenchmarkParkerCond(b *testing.B) { benchParkers(b, newCondPermit(), newCondPermit()) }

// futexPermit is a one-permit parker on a raw futex: the waiting goroutine
// blocks its OS thread in the kernel.
type futexPermit struct{ v atomic.Int32 }

const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

func (p *futexPermit) park() {
	for !p.v.CompareAndSwap(1, 0) {
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.v)), futexWaitPrivate, 0, 0, 0, 0)
	}
}

func (p *futexPermit) unpark() {
	p.v.Store(1)
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.v)), futexWakePrivate, 1, 0, 0, 0)
}

func BenchmarkParkerFutex(b *testing.B) { benchParkers(b, new(futexPermit), new(futexPermit)) }

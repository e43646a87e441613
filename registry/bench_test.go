package registry

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// rwRegistry is the rejected design (see the note in registry.go): one
// RWMutex over a plain map. It exists only to be measured against Registry.
type rwRegistry struct {
	mu     sync.RWMutex
	byName map[string]int
}

func (r *rwRegistry) Whereis(name string) (int, bool) {
	r.mu.RLock()
	p, ok := r.byName[name]
	r.mu.RUnlock()
	return p, ok
}

func (r *rwRegistry) register(name string, p int) {
	r.mu.Lock()
	r.byName[name] = p
	r.mu.Unlock()
}

func (r *rwRegistry) unregister(name string) {
	r.mu.Lock()
	delete(r.byName, name)
	r.mu.Unlock()
}

type whereiser interface {
	Whereis(string) (int, bool)
}

const benchNames = 1024

func benchNameList() []string {
	names := make([]string, benchNames)
	for i := range names {
		names[i] = fmt.Sprintf("service-%d", i)
	}
	return names
}

// BenchmarkWhereis compares the chosen design (xsync map read lock-free,
// writers under a mutex) with a RWMutex-guarded map, for parallel readers
// alone and for parallel readers while one goroutine keeps registering and
// unregistering a name. Run: go test -run=^$ -bench=Whereis -cpu=1,2 ./registry/
func BenchmarkWhereis(b *testing.B) {
	names := benchNameList()
	impls := []struct {
		name  string
		setup func() (whereiser, func(string, int), func(string))
	}{
		{"xsync", func() (whereiser, func(string, int), func(string)) {
			r := New[int]()
			return r, func(n string, p int) { _ = r.Register(n, p) }, func(n string) { _ = r.Unregister(n) }
		}},
		{"rwmutex", func() (whereiser, func(string, int), func(string)) {
			r := &rwRegistry{byName: map[string]int{}}
			return r, r.register, r.unregister
		}},
	}
	for _, impl := range impls {
		for _, churn := range []bool{false, true} {
			name := impl.name + "/readers"
			if churn {
				name += "+writer"
			}
			b.Run(name, func(b *testing.B) {
				r, reg, unreg := impl.setup()
				for i, n := range names {
					reg(n, i+1)
				}
				var stop atomic.Bool
				var wg sync.WaitGroup
				if churn {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; !stop.Load(); i++ {
							reg("churn", i+benchNames+1)
							unreg("churn")
						}
					}()
				}
				var seed atomic.Uint32
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := int(seed.Add(7919))
					for pb.Next() {
						if _, ok := r.Whereis(names[i%benchNames]); !ok {
							b.Error("lost a name")
							return
						}
						i++
					}
				})
				b.StopTimer()
				stop.Store(true)
				wg.Wait()
			})
		}
	}
}

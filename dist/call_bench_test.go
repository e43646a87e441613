package dist_test

import (
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
)

// benchNodes starts two connected nodes in one process, b with the kv
// server and the worker behaviour.
func benchNodes(b *testing.B) (na, nb *testNode) {
	port := freePort(b)
	na = startNode(b, port, dist.Config{EPMD: dist.EPMDServe})
	nb = startNode(b, port, dist.Config{EPMD: dist.EPMDExternal})
	if _, err := actor.StartServer(nb.sys, &kvServer{}, actor.WithSpawn(actor.Name("kv"))); err != nil {
		b.Fatal(err)
	}
	if err := nb.RegisterSpawn("noop", func([]any) (actor.Actor, error) { return benchNoop{}, nil }); err != nil {
		b.Fatal(err)
	}
	if err := na.Connect(ctxT(b, 10*time.Second), nb.Name()); err != nil {
		b.Fatal(err)
	}
	return na, nb
}

type benchNoop struct{}

func (benchNoop) Init(c *actor.Context)       { c.Stop(actor.Normal) }
func (benchNoop) Receive(*actor.Context, any) {}

// BenchmarkRemoteCall: sequential gen_server calls from a goroutine on
// node a to a Server on node b, by name.
func BenchmarkRemoteCall(b *testing.B) {
	a, nb := benchNodes(b)
	b.ResetTimer()
	for range b.N {
		if _, err := a.CallName(a.sys, "kv", nb.Name(), atomPing, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemoteSpawn: remote spawns of a behaviour that exits at once,
// by 8 goroutines on node a, each waiting for its reply.
func BenchmarkRemoteSpawn(b *testing.B) {
	a, nb := benchNodes(b)
	const g = 8
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for j := i; j < b.N; j += g {
				if _, err := a.Spawn(a.sys, nb.Name(), "noop"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

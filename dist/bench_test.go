package dist_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// counter counts messages and signals done after n.
type counter struct {
	n    int
	done chan struct{}
}

func (c *counter) Receive(_ *actor.Context, msg any) {
	if c.n--; c.n == 0 {
		close(c.done)
	}
}

// BenchmarkThroughput: b.N messages {m, I} from a goroutine on node a to
// an actor on node b, over loopback.
func BenchmarkThroughput(b *testing.B) {
	port := freePort(b)
	a := startNode(b, port, dist.Config{EPMD: dist.EPMDServe})
	bn := startNode(b, port, dist.Config{EPMD: dist.EPMDExternal})
	done := make(chan struct{})
	bn.sys.Spawn(&counter{n: b.N, done: done}, actor.Name("count"))
	self, _ := a.sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err := a.Connect(ctxT(b, 10*time.Second), bn.Name()); err != nil {
		b.Fatal(err)
	}
	m := actor.Atom("m")
	b.ResetTimer()
	for i := range b.N {
		for a.SendName(self, "count", bn.Name(), etf.Tuple{m, i}) == dist.ErrBusy {
			time.Sleep(10 * time.Microsecond)
		}
	}
	<-done
}

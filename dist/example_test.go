package dist_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// exampleNodes starts two nodes in one process, the first serving the
// EPMD registrar on a free port; stop stops both.
func exampleNodes(a, b string) (sysA *actor.System, na *dist.Node, sysB *actor.System, nb *dist.Node, stop func()) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	start := func(name string, mode dist.EPMDMode) (*actor.System, *dist.Node) {
		sys, _ := actor.Start(actor.Config{})
		n, err := dist.Start(sys, dist.Config{Name: name, Cookie: "secret", EPMD: mode, EPMDPort: port})
		if err != nil {
			panic(err)
		}
		return sys, n
	}
	sysA, na = start(a, dist.EPMDServe)
	sysB, nb = start(b, dist.EPMDExternal)
	return sysA, na, sysB, nb, func() {
		sysB.Shutdown(context.Background())
		sysA.Shutdown(context.Background()) // last: it serves the registrar
	}
}

// Two nodes in one process: a pings b, sends to b's registered echo server
// by name, and gets the echo back. The first node serves the EPMD
// registrar (on a free port here, see exampleNodes; by default a node
// uses the machine's epmd, see EPMDMode).
func Example() {
	sysA, a, sysB, b, stop := exampleNodes("a@127.0.0.1", "b@127.0.0.1")
	defer stop()

	// b's echo server answers {From, Msg} with Msg.
	sysB.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if t, ok := msg.(etf.Tuple); ok && len(t) == 2 {
			c.Send(t[0].(actor.Pid), t[1])
		}
	}), actor.Name("echo"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println("ping:", a.Ping(ctx, b.Name()))

	got := make(chan any, 1)
	self, _ := sysA.Spawn(actor.ActorFunc(func(_ *actor.Context, msg any) { got <- msg }))
	a.SendName(self, "echo", b.Name(), etf.Tuple{self, "hello"})
	fmt.Println("echo:", <-got)
	fmt.Println("nodes:", a.Nodes())
	// Output:
	// ping: <nil>
	// echo: hello
	// nodes: [b@127.0.0.1]
}

package dist_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/epmd"
)

// A node given a seed that is not up yet keeps trying, and is connected
// once the seed starts: nobody sends to it first.
func ExampleConfig_seeds() {
	l, err := net.Listen("tcp", "127.0.0.1:0") // a registrar of this example's own
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := epmd.Serve(l)
	defer reg.Close()
	port := l.Addr().(*net.TCPAddr).Port
	start := func(name string, seeds ...actor.Atom) *dist.Node {
		sys, _ := actor.Start(actor.Config{})
		n, err := dist.Start(sys, dist.Config{Name: name, Cookie: "c", EPMD: dist.EPMDExternal, EPMDPort: port,
			Seeds: seeds, SeedRetryMin: 10 * time.Millisecond, SeedRetryMax: 100 * time.Millisecond})
		if err != nil {
			panic(err)
		}
		return n
	}
	stop := func(n *dist.Node) { n.System().Shutdown(context.Background()) }

	a := start("examplea@127.0.0.1", "exampleb@127.0.0.1") // b is not up yet
	defer stop(a)
	b := start("exampleb@127.0.0.1")
	defer stop(b)
	for deadline := time.Now().Add(10 * time.Second); len(a.Nodes()) == 0 || len(b.Nodes()) == 0; {
		if time.Now().After(deadline) {
			fmt.Println("not connected")
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println(a.Seeds(), a.Nodes(), b.Nodes())
	// Output: [exampleb@127.0.0.1] [exampleb@127.0.0.1] [examplea@127.0.0.1]
}

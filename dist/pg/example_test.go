package pg_test

import (
	"context"
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/pg"
)

// A scope on one node: a member joined twice is listed twice, and leaves
// once per join. On a cluster, Members lists every node's members.
func Example() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	n, err := dist.Start(sys, dist.Config{Name: "pgexample@127.0.0.1", Cookie: "c", EPMD: dist.EPMDNone})
	if err != nil {
		fmt.Println(err)
		return
	}
	scope, _ := pg.Start(n)
	w, _ := sys.Spawn(idle{})
	workers := actor.Atom("workers") // Erlang's pg:join(workers, Pid)
	scope.Join(sys, workers, w, w)
	fmt.Println(len(scope.Members(workers)), scope.WhichGroups())
	scope.Leave(sys, workers, w)
	fmt.Println(len(scope.LocalMembers(workers)))
	sys.Exit(w, actor.Kill) // a dead member leaves its groups
	// Output:
	// 2 [workers]
	// 1
}

package supervisor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// ExampleChildInit: a nested supervisor whose children are computed when
// it starts, and again whenever its parent restarts it.
func ExampleChildInit() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	shards := func(*actor.Context) (supervisor.Spec, error) {
		spec := supervisor.Spec{Name: "shards"}
		for i := 0; i < 4; i++ {
			spec.Children = append(spec.Children, stopperChild(fmt.Sprint("shard", i)))
		}
		return spec, nil
	}
	supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{supervisor.ChildInit("shards", shards)}})
	pid, _ := sys.Whereis("shards")
	counts, _ := supervisor.CountChildren(sys, pid)
	fmt.Println(counts.Active)
	// Output: 4
}

// ExampleStartLinkInit: an actor starts a linked supervisor whose spec is
// computed in the supervisor.
func ExampleStartLinkInit() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	out := make(chan string, 1)
	parent, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		sup, err := supervisor.StartLinkInit(c, func(*actor.Context) (supervisor.Spec, error) {
			return supervisor.Spec{Children: []supervisor.ChildSpec{stopperChild("w")}}, nil
		})
		counts, _ := supervisor.CountChildren(c, sup)
		out <- fmt.Sprint(err, " ", counts.Active)
	}))
	sys.Send(parent, "go")
	fmt.Println(<-out)
	// Output: <nil> 1
}

// ExampleHooks_started: main learns that the tree under RunSystem is up.
func ExampleHooks_started() {
	sys, _ := actor.Start(actor.Config{})
	up := make(chan actor.Pid, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- supervisor.RunSystem(ctx, sys, supervisor.Spec{
			Children: []supervisor.ChildSpec{stopperChild("db"), stopperChild("http")},
			Hooks:    &supervisor.Hooks{Started: func(top actor.Pid) { up <- top }},
		}, 5*time.Second)
	}()
	top := <-up // the tree is up: serve traffic
	counts, _ := supervisor.CountChildren(sys, top)
	fmt.Println("children up:", counts.Active)
	cancel()
	fmt.Println(<-done)
	// Output:
	// children up: 2
	// <nil>
}

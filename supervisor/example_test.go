package supervisor_test

import (
	"context"
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

type idle struct{ actor.ServerBase }

func Example() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	newIdle := func(...any) actor.Server { return idle{} }
	sup, _ := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.OneForOne,
		Children: []supervisor.ChildSpec{
			{ID: "a", Start: supervisor.ServerStart(newIdle)},
			{ID: "b", Start: supervisor.ServerStart(newIdle), Restart: supervisor.Transient},
		},
	})
	n, _ := supervisor.CountChildren(sys, sup)
	fmt.Printf("%+v\n", n)
	_ = supervisor.TerminateChild(sys, sup, "b")
	cs, _ := supervisor.WhichChildren(sys, sup)
	for _, c := range cs {
		fmt.Println(c.ID, c.Type, !c.Pid.IsZero())
	}
	// Output:
	// {Specs:2 Active:2 Supervisors:0 Workers:2}
	// a worker true
	// b worker false
}

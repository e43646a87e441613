package dist_test

import (
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// exampleWorker is the behaviour b runs for a's supervisor: it traps exits
// so that its supervisor's stop reaches it as an Exit (its terminate).
type exampleWorker struct{ events chan<- string }

func (w *exampleWorker) Init(c *actor.Context) {
	c.TrapExit(true)
	w.events <- "started"
}

func (w *exampleWorker) Receive(c *actor.Context, msg any) {
	if e, ok := msg.(actor.Exit); ok {
		w.events <- fmt.Sprint("stopped: ", e.Reason)
		c.Stop(e.Reason)
	}
}

// A supervisor on node a with its child on node b: the child killed on b
// is restarted on b, and the supervisor's stop shuts it down there.
func ExampleNode_RemoteChild() {
	sysA, a, sysB, b, stop := exampleNodes("sa@127.0.0.1", "sb@127.0.0.1")
	defer stop()

	events := make(chan string, 4)
	b.RegisterSpawn("worker", func([]any) (actor.Actor, error) { return &exampleWorker{events}, nil })
	restarted := make(chan actor.Pid, 1)
	sup, err := supervisor.Start(sysA, supervisor.Spec{
		Children: []supervisor.ChildSpec{{ID: "worker", Start: a.RemoteChild(b.Name(), "worker")}},
		Hooks: &supervisor.Hooks{Restarted: func(_ actor.Pid, _ string, _, pid actor.Pid) {
			restarted <- pid
		}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("worker:", <-events)
	kids, _ := supervisor.WhichChildren(sysA, sup)
	id, _ := kids[0].Pid.Remote()
	fmt.Println("on:", id.Node)

	// Killed on b, the worker is restarted there.
	sysB.Exit(sysB.LocalPid(id.ID, id.Serial), actor.Kill)
	pid := <-restarted
	fmt.Println("worker:", <-events)
	id, _ = pid.Remote()
	fmt.Println("on:", id.Node)

	// The supervisor's stop reaches the worker on b.
	sysA.Exit(sup, actor.Shutdown)
	fmt.Println("worker:", <-events)
	// Output:
	// worker: started
	// on: sb@127.0.0.1
	// worker: started
	// on: sb@127.0.0.1
	// worker: stopped: shutdown
}

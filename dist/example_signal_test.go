package dist_test

import (
	"fmt"

	"github.com/colonyrt/colony/actor"
)

// A link and a monitor across two nodes: an actor of a links to and
// monitors a worker of b and asks it to stop; the worker's exit comes
// back as the Exit of the link (first: links before monitors, as in OTP)
// and the Down of the monitor, both naming the worker's remote pid.
func Example_linkAcrossNodes() {
	sysA, a, sysB, b, stop := exampleNodes("a@127.0.0.1", "b@127.0.0.1")
	defer stop()

	// b's worker says who it is when asked, and stops when told.
	sysB.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case actor.Pid:
			c.Send(m, c.Self())
		case actor.Atom:
			c.Stop(m)
		}
	}), actor.Name("worker"))

	done := make(chan struct{})
	var worker actor.Pid
	self, _ := sysA.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case actor.Pid: // the worker's pid, a pid of b
			worker = m
			c.Link(m)
			c.Monitor(m)
			c.Send(m, actor.Atom("done")) // after the link and the monitor, on one connection
		case actor.Exit:
			fmt.Println("exit:", m.From == worker, m.Reason)
		case actor.Down:
			fmt.Println("down:", m.Pid == worker, m.Reason)
			c.Stop(actor.Normal)
			close(done)
		}
	}), actor.TrapExit())
	a.SendName(self, "worker", b.Name(), self)
	<-done
	// Output:
	// exit: true done
	// down: true done
}

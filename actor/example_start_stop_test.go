package actor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// ExampleContext_StartLink: an actor starts a linked worker and waits for
// its InitAck; the wait hands the scheduler role on.
func ExampleContext_StartLink() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	out := make(chan string, 1)
	parent, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		_, err := c.StartLink(initFunc(func(c *actor.Context) { c.InitAck(nil) }), time.Second)
		out <- fmt.Sprint("worker started: ", err == nil)
	}))
	sys.Send(parent, "go")
	fmt.Println(<-out)
	// Output: worker started: true
}

// ExampleContext_InitAck: an actor may ack its start from a later
// handler, once it has what it needs.
func ExampleContext_InitAck() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	_, err := actor.StartActor(sys, &lateAcker{}, time.Second)
	fmt.Println(err)
	// Output: <nil>
}

// lateAcker asks for its configuration in Init and acks once it has it.
type lateAcker struct{ cfg string }

func (a *lateAcker) Init(c *actor.Context) { c.Send(c.Self(), "config loaded") }

func (a *lateAcker) Receive(c *actor.Context, m any) {
	if s, ok := m.(string); ok && a.cfg == "" {
		a.cfg = s
		c.InitAck(nil) // now the starter returns
	}
}

// ExampleContext_StopServer: an actor stops a server and waits for it.
func ExampleContext_StopServer() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	srv := &stopSrv{terminated: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, srv)
	out := make(chan error, 1)
	stopper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		out <- c.StopServer(pid, actor.Shutdown, time.Second)
	}))
	sys.Send(stopper, "go")
	fmt.Println(<-out, <-srv.terminated)
	// Output: <nil> shutdown
}

// ExampleCallTimeoutError: a call that times out says which call.
func ExampleCallTimeoutError() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	type lookup struct{ key string }
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("cache"))
	_, err := sys.Call(pid, lookup{"k"}, 10*time.Millisecond)
	var te *actor.CallTimeoutError
	fmt.Println(errors.Is(err, actor.ErrTimeout), errors.As(err, &te), te.Name, te.Request, te.After)
	// Output: true true cache actor_test.lookup 10ms
}

// ExampleStopUnreported: a server's Init refuses a bad configuration; the
// starter gets the error, and no crash report is written for it.
func ExampleStopUnreported() {
	reports := make(chan actor.Report, 1)
	sys, _ := actor.Start(actor.Config{Reporter: func(r actor.Report) { reports <- r }})
	defer sys.Shutdown(context.Background())

	_, err := actor.StartServer(sys, badConfig{})
	fmt.Println(err)
	fmt.Println("crash reports:", len(reports))
	// Output:
	// actor: start failed: missing port
	// crash reports: 0
}

type badConfig struct{ actor.ServerBase }

func (badConfig) Init(*actor.Context) error {
	return actor.StopUnreported(actor.Atom("missing port"))
}

// ExampleErrBadBehaviour: a plain actor written with the Server's Init
// would never have its Init called: Spawn says so.
func ExampleErrBadBehaviour() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	_, err := sys.Spawn(&serverInitActor{})
	fmt.Println(errors.Is(err, actor.ErrBadBehaviour))
	// Output: true
}

// ExampleErrNotServer: StopServer of a plain actor is refused.
func ExampleErrNotServer() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	fmt.Println(actor.StopServer(sys, pid, nil, time.Second))
	// Output: actor: not a server
}

// ExampleDown_name: the Down of a monitor taken by name names the name.
func ExampleDown_name() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	downs := make(chan actor.Down, 1)
	w, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m := m.(type) {
		case string:
			c.MonitorName(m)
		case actor.Down:
			downs <- m
		}
	}))
	sys.Send(w, "db")
	d := <-downs
	fmt.Printf("%s %v\n", d.Name, d.Reason)
	// Output: db noproc
}

package dist_test

import (
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// tally is a Server on node b: its calls come from any node.
type tally struct {
	actor.ServerBase
	n int
}

func (s *tally) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case int:
		s.n += m
		c.Reply(req, s.n)
		return
	case actor.Atom: // who
		c.Reply(req, c.Self())
		return
	}
	c.ReplyError(req, actor.ErrUnhandled)
}

// A call of a Server on another node: by name on the node
// (gen_server:call({counter, Node}, 2)), and by pid with the ordinary Call.
func ExampleNode_CallName() {
	sysA, a, sysB, b, stop := exampleNodes("calla@127.0.0.1", "callb@127.0.0.1")
	defer stop()
	actor.StartServer(sysB, &tally{}, actor.WithSpawn(actor.Name("counter")))

	v, err := a.CallName(sysA, "counter", b.Name(), 2, 5*time.Second)
	fmt.Println(v, err)
	who, _ := a.CallName(sysA, "counter", b.Name(), actor.Atom("who"), 5*time.Second)
	v, err = actor.Call[int](sysA, who.(actor.Pid), 3, 5*time.Second) // a remote pid: the same Call
	fmt.Println(v, err)
	_, err = a.CallName(sysA, "nobody", b.Name(), 2, 5*time.Second)
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// 5 <nil>
	// actor: no such process
}

// greeter is the behaviour node b lets peers spawn: it sends its first
// argument's pid a greeting and exits.
type greeter struct {
	to   actor.Pid
	node actor.Atom
}

func (g greeter) Init(c *actor.Context) {
	c.Send(g.to, "hello from "+string(g.node))
	c.Stop(actor.Normal)
}
func (greeter) Receive(*actor.Context, any) {}

// A behaviour registered by name is what peers spawn: Colony with
// Node.Spawn, Erlang with spawn(Node, colony, greeter, [self()]).
func ExampleNode_RegisterSpawn() {
	sysA, a, _, b, stop := exampleNodes("spawna@127.0.0.1", "spawnb@127.0.0.1")
	defer stop()
	b.RegisterSpawn("greeter", func(args []any) (actor.Actor, error) {
		to, ok := args[0].(actor.Pid)
		if !ok {
			return nil, fmt.Errorf("greeter: %v is not a pid", args[0])
		}
		return greeter{to, b.Name()}, nil
	})

	got := make(chan any, 1)
	self, _ := sysA.Spawn(actor.ActorFunc(func(_ *actor.Context, msg any) { got <- msg }))
	pid, err := a.Spawn(sysA, b.Name(), "greeter", self)
	fmt.Println(pid.IsRemote(), err)
	fmt.Println(<-got)
	_, err = a.Spawn(sysA, b.Name(), "greeter", "not a pid") // the func refuses
	fmt.Println(err)
	// Output:
	// true <nil>
	// hello from spawnb@127.0.0.1
	// dist: spawn of greeter on spawnb@127.0.0.1: badarg
}

package actor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// tally is the README's first actor: it adds the ints it is sent and
// answers calls with the total.
type tally struct{ n int }

func (s *tally) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case int:
		s.n += m
	case actor.Request: // a call: reply now (or keep m and reply later)
		c.Reply(m, s.n)
	}
}

// Example is the README's first actor, checked: a named tally, two sends
// and a typed call. Sends from one sender arrive in order, so the call sees
// both.
func Example() {
	sys, _ := actor.Start(actor.Config{}) // Schedulers: GOMAXPROCS
	defer sys.Shutdown(context.Background())

	pid, _ := sys.Spawn(&tally{}, actor.Name("counter"))
	sys.Send(pid, 2)
	sys.Send(pid, 3)
	n, err := actor.Call[int](sys, pid, "get", time.Second)
	fmt.Println(n, err)
	// Output: 5 <nil>
}

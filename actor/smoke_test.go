package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

type pingMsg struct {
	from actor.Pid
	n    int
}

func TestSmokePingPong(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	pong, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		p := m.(pingMsg)
		c.Send(p.from, pingMsg{c.Self(), p.n})
	}))
	const N = 100000
	ping, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case string:
			c.Send(pong, pingMsg{c.Self(), 0})
		case pingMsg:
			if v.n+1 == N {
				done <- v.n + 1
				c.Stop(actor.Normal)
				return
			}
			c.Send(pong, pingMsg{c.Self(), v.n + 1})
		}
	}))
	start := time.Now()
	sys.Send(ping, "go")
	select {
	case n := <-done:
		t.Logf("%d round trips in %v (%v/msg)", n, time.Since(start), time.Since(start)/(2*N))
	case <-time.After(10 * time.Second):
		t.Fatalf("timeout; stats %+v", sys.Stats())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", sys.Stats())
}

type caller struct {
	callee actor.Pid
	out    chan any
}

func (c2 *caller) Receive(c *actor.Context, m any) {
	v, err := c.Call(c2.callee, m, time.Second)
	c2.out <- []any{v, err}
}

func TestSmokeCall(t *testing.T) {
	sys, _ := actor.Start(actor.Config{Schedulers: 1})
	defer sys.Shutdown(context.Background())
	callee, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, r.Msg.(int)*2)
		}
	}))
	v, err := actor.Call[int](sys, callee, 21, time.Second)
	if v != 42 || err != nil {
		t.Fatal(v, err)
	}
	out := make(chan any, 1)
	cp, _ := sys.Spawn(&caller{callee, out})
	sys.Send(cp, 5)
	got := <-out
	t.Log(got)
	if got.([]any)[0] != 10 {
		t.Fatal(got)
	}
}

package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestSendInsideAllocatesNothing: a Send from one actor to another
// allocates nothing of its own once the flow is steady: the mailbox node
// comes from the sending worker's cache, which the receivers' pops refill
// (mailbox.Cache), and the wake is a CAS and a run queue slot. The message
// is boxed once, before the measurement, and bounced between two actors;
// each measured run is one Send from outside (its node is the one
// allocation we allow) that starts roundTrips round trips inside.
func TestSendInsideAllocatesNothing(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates on its own")
	}
	const roundTrips = 1000
	sys := start(t, actor.Config{})
	done := make(chan struct{}, 1)
	left := 0
	var pong actor.Pid
	ping, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m.(type) {
		case string: // a burst starts
			left = roundTrips
		case *allocBall:
			if left--; left == 0 {
				done <- struct{}{}
				return
			}
		}
		_ = c.Send(pong, allocMsg)
	}))
	if err != nil {
		t.Fatal(err)
	}
	pong, err = sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		_ = c.Send(ping, m)
	}))
	if err != nil {
		t.Fatal(err)
	}
	limit := time.NewTimer(time.Minute) // one timer for the whole test: no allocation per run
	defer limit.Stop()
	burst := func() {
		if err := sys.Send(ping, "go"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-limit.C:
			t.Fatal("the round trips did not finish in a minute")
		}
	}
	for range 5 { // warm the workers' node caches
		burst()
	}
	allocs := testing.AllocsPerRun(20, burst)
	// One allocation per run is the outside Send's node; anything past
	// that is the inside path allocating (2000 sends a run).
	if allocs > 2 {
		t.Fatalf("%.1f allocations per %d in-System sends, want none past the outside Send's own", allocs, 2*roundTrips)
	}
}

type allocBall struct{}

// allocMsg is the ball, boxed once.
var allocMsg any = &allocBall{}

// TestCallInsideAllocations: a call from one actor to another allocates
// its reply cell, the Request boxed into the callee's mailbox and the
// call monitor's entry, and nothing more: in particular no mailbox node
// for the Request, which the caller's role takes from the nodes that the
// spare holding the role during the call freed (sched.nc).
func TestCallInsideAllocations(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates on its own")
	}
	const calls = 1000
	sys := start(t, actor.Config{})
	srv, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, r.Msg)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	cli, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		for range calls {
			if _, err := c.Call(srv, allocMsg, actor.Infinity); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	burst := func() {
		if err := sys.Send(cli, "go"); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-limit.C:
			t.Fatal("the calls did not finish in a minute")
		}
	}
	burst() // warm the roles' node caches and the spare pool
	perCall := testing.AllocsPerRun(5, burst) / calls
	if perCall > 3.05 {
		t.Fatalf("%.2f allocations per call, want 3 (reply cell, boxed Request, monitor entry)", perCall)
	}
}

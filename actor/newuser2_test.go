package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// An actor that Shutdown has not told to stop yet cannot arm a timer while
// an older tree drains: SendAfter and StartTimer return ErrStopped from the
// moment Shutdown begins, though Send, Call and Monitor work until the
// System halts, and the timers already armed still fire. A periodic tick
// re-armed on each firing (there is no send_interval) dies mid-stop, as does
// any timeout an actor arms during a long drain; erlang:send_after works
// until the process itself is stopped.
func TestNewuser2SendAfterRefusedDuringOrderedShutdown(t *testing.T) {
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	armed := make(chan error, 1)
	ticked := make(chan struct{}, 1)
	// The older root: stopped only after the newer one has exited.
	older, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch msg {
		case "arm":
			_, err := c.SendAfter(c.Self(), "tick", time.Millisecond)
			armed <- err
		case "tick":
			ticked <- struct{}{}
		}
	}))
	// The newer root traps exits and takes a while to stop (a drain).
	draining, release := make(chan struct{}), make(chan struct{})
	sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if _, ok := msg.(actor.Exit); ok {
			close(draining)
			<-release
			c.Stop(actor.Shutdown)
		}
	}), actor.TrapExit())
	stopped := make(chan error)
	go func() { stopped <- sys.Shutdown(context.Background()) }()
	<-draining
	defer func() { close(release); <-stopped }()

	if !sys.Alive(older) {
		t.Fatal("the older root was stopped before the newer one")
	}
	if err := sys.Send(older, "arm"); err != nil {
		t.Fatalf("Send during the stop: %v", err)
	}
	if err := <-armed; err != nil {
		t.Fatalf("SendAfter from a live actor during Shutdown's ordered stop: %v, want nil", err)
	}
	select {
	case <-ticked:
	case <-time.After(5 * time.Second):
		t.Fatal("the timer never fired")
	}
}

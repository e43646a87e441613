package actor_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// review8: an actor told to stop by Shutdown's last signal to the actors
// left (stopOrphans' signal to all, once the live count has stood still)
// may spawn, since 9375e19, until Shutdown seals the System. A child it
// spawns unlinked then was never signalled: Shutdown waited for it until
// its ctx ended (for ever with context.Background()), then killed it and
// returned ctx's error.
func TestReview8SpawnDuringLastOrphanSignalIsStopped(t *testing.T) {
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan actor.Pid, 1)
	spawnErr := make(chan error, 1)
	// The root spawns a and b, linked to each other only, then exits: at
	// Shutdown they are orphans linked to a live actor, so only the
	// signal to all reaches them. a traps exits; told Shutdown by the
	// System, it spawns an idle helper, unlinked, and stops.
	root, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		a, err := c.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			switch m := msg.(type) {
			case actor.Pid:
				c.Link(m)
				ready <- c.Self()
			case actor.Exit:
				if m.From.IsZero() {
					c.Sleep(50 * time.Millisecond) // after the scan
					_, err := c.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
					spawnErr <- err
					c.Stop(actor.Shutdown)
				}
			}
		}), actor.TrapExit())
		if err != nil {
			t.Error(err)
			return
		}
		b, err := c.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		if err != nil {
			t.Error(err)
			return
		}
		c.Send(a, b)
		c.Stop(actor.Normal)
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(root, "go")
	<-ready
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	err = sys.Shutdown(ctx)
	if err != nil {
		t.Fatalf("Shutdown: %v after %v (the helper spawned at its signal to all was never told to stop)", err, time.Since(begin).Round(time.Millisecond))
	}
	select {
	case err := <-spawnErr:
		t.Logf("the spawn during the signal to all: %v", err)
	default:
		t.Fatal("a was never told Shutdown")
	}
}

type echoSrv struct{ actor.ServerBase }

func (echoSrv) HandleCall(c *actor.Context, r actor.Request) {
	if n := r.Msg.(int); n%3 == 0 {
		runtime.Gosched()
	}
	c.Reply(r, r.Msg)
}

// review8: CallContext's pooled done channel under cancels racing replies:
// every call gets its own reply or ctx's error, never another call's
// (a channel recycled while a sender could still use it would hand one).
func TestReview8CallContextCancelRacesReply(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, err := actor.StartServer(sys, echoSrv{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := g; i < 4000; i += 4 {
				ctx, cancel := context.WithCancel(context.Background())
				if i%2 == 0 {
					go cancel()
				}
				v, err := sys.CallContext(ctx, pid, i)
				cancel()
				if err == nil && v != i {
					t.Errorf("call %d got %v", i, v)
					return
				}
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("call %d: %v", i, err)
					return
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

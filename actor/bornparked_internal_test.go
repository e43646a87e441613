package actor

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/slot"
)

// An actor with no Init is born parked: never queued until a message or
// signal comes. A message or kill that reaches it between its publication
// and its install saw no Parked word to wake; the spawn's re-check after
// the install must wake it, or the message waits forever and a killed
// child is never reclaimed.

func TestBornParkedIdle(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 1})
	pid, err := sys.Spawn(ActorFunc(func(*Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, st := sys.slab.At(pid.idx).Word.Snapshot(); st != slot.Parked {
		t.Fatalf("a fresh actor with no Init is %v, want parked", st)
	}
	if got := sys.Stats().Schedulers[0].Activations; got != 0 {
		t.Fatalf("%d activations for an actor nobody sent anything", got)
	}
}

func TestBornParkedMessageBeforeInstall(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	got := make(chan any, 1)
	hook := func(child Pid) { sys.Send(child, "early") }
	testHookSpawnInstall.Store(&hook)
	defer testHookSpawnInstall.Store(nil)
	_, err := sys.Spawn(ActorFunc(func(_ *Context, m any) { got <- m }))
	testHookSpawnInstall.Store(nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "early" {
			t.Fatalf("got %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a message sent before the install was never handled")
	}
}

func TestBornParkedKilledBeforeInstall(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	hook := func(child Pid) { sys.Exit(child, Kill) }
	testHookSpawnInstall.Store(&hook)
	defer testHookSpawnInstall.Store(nil)
	if _, err := sys.Spawn(ActorFunc(func(*Context, any) {})); err != nil {
		t.Fatal(err)
	}
	testHookSpawnInstall.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Wait(ctx); err != nil {
		t.Fatalf("a child killed before its install was never reclaimed: %v (live %d)", err, sys.Stats().Live)
	}
}

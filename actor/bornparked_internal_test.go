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

// The same for what else can reach a child born parked between its
// publication and its install: a trapped exit signal (a Deliver), a
// non-kill exit signal (the exit latch), the exit signal of a SpawnLink
// parent that dies there (the parent's finaliser finds the published
// child), and a Call's request. Each must be seen by the spawn's re-check
// after the install; these pin the paths the re-check covers.

func hookSpawnInstall(t *testing.T, f func(child Pid)) {
	testHookSpawnInstall.Store(&f)
	t.Cleanup(func() { testHookSpawnInstall.Store(nil) })
}

func waitIdle(t *testing.T, sys *System) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Wait(ctx); err != nil {
		t.Fatalf("a child signalled before its install was never reclaimed: %v (live %d)", err, sys.Stats().Live)
	}
}

func TestBornParkedTrappedExitBeforeInstall(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	got := make(chan any, 1)
	hookSpawnInstall(t, func(child Pid) { sys.Exit(child, Atom("boom")) })
	pid, err := sys.Spawn(ActorFunc(func(_ *Context, m any) { got <- m }), TrapExit())
	testHookSpawnInstall.Store(nil)
	if err != nil {
		t.Fatal(err)
	}
	// It traps and ignores Shutdown's exit signal: killed at the end, or
	// the cleanup's Shutdown would wait out its 5 s.
	defer sys.Exit(pid, Kill)
	select {
	case m := <-got:
		if e, ok := m.(Exit); !ok || e.Reason != Atom("boom") {
			t.Fatalf("got %#v, want the Exit", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an exit signal trapped before the install was never handled")
	}
}

func TestBornParkedExitSignalBeforeInstall(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	hookSpawnInstall(t, func(child Pid) { sys.Exit(child, Atom("boom")) })
	if _, err := sys.Spawn(ActorFunc(func(*Context, any) {})); err != nil {
		t.Fatal(err)
	}
	testHookSpawnInstall.Store(nil)
	waitIdle(t, sys)
}

func TestBornParkedParentDiesBeforeInstall(t *testing.T) {
	for _, trap := range []bool{false, true} {
		sys := startInternal(t, Config{Schedulers: 2})
		got := make(chan any, 1)
		var parent Pid
		hookSpawnInstall(t, func(Pid) { sys.Exit(parent, Kill) })
		var opts []SpawnOption
		if trap {
			opts = append(opts, TrapExit())
		}
		var err error
		parent, err = sys.Spawn(ActorFunc(func(c *Context, m any) {
			c.SpawnLink(ActorFunc(func(c *Context, m any) {
				// A trapping child stops at Shutdown's exit signal, or the
				// cleanup's Shutdown would wait out its 5 s.
				if e, ok := m.(Exit); ok && e.From.IsZero() {
					c.Stop(e.Reason)
					return
				}
				got <- m
			}), opts...)
		}))
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(parent, "go")
		if !trap {
			waitIdle(t, sys)
			continue
		}
		select {
		case m := <-got:
			if e, ok := m.(Exit); !ok || e.From != parent || e.Reason != Reason(Killed) {
				t.Fatalf("got %#v, want the parent's Exit", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a trapping child never got the exit of a parent killed before its install")
		}
	}
}

func TestBornParkedCallBeforeInstall(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	res := make(chan error, 1)
	hookSpawnInstall(t, func(child Pid) {
		go func() { _, err := sys.Call(child, "q", 5*time.Second); res <- err }()
		// Until the request is in the mailbox.
		deadline := time.Now().Add(5 * time.Second)
		for sys.procOf(child).mbox.Len() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	})
	_, err := sys.Spawn(ActorFunc(func(c *Context, m any) {
		if r, ok := m.(Request); ok {
			c.Reply(r, 1)
		}
	}))
	testHookSpawnInstall.Store(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatalf("a call made before the install: %v", err)
	}
}

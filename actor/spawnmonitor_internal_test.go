package actor

import (
	"errors"
	"testing"
	"time"
)

// TestSpawnMonitorParentKilledBeforePublish: a parent killed inside its
// SpawnMonitor, after the monitor is made and before the child is
// published, leaves no monitor on the child: the parent's finaliser cannot
// find the unpublished child, so the spawn takes the monitor back itself.
// The child carried the dead parent's monitor for its whole life.
func TestSpawnMonitorParentKilledBeforePublish(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	var parent Pid
	kill := func() { sys.Exit(parent, Kill) }
	testHookSpawnMonitored.Store(&kill)
	defer testHookSpawnMonitored.Store(nil)
	type result struct {
		child Pid
		err   error
	}
	out := make(chan result, 1)
	var err error
	parent, err = sys.Spawn(ActorFunc(func(c *Context, m any) {
		child, _, err := c.SpawnMonitor(ActorFunc(func(*Context, any) {}))
		out <- result{child, err}
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(parent, "go")
	var r result
	select {
	case r = <-out:
	case <-time.After(5 * time.Second):
		t.Fatal("no spawn")
	}
	if r.err != nil {
		t.Skipf("the spawn failed (%v): nothing to check", r.err)
	}
	info, err := sys.Info(r.child)
	if err != nil {
		t.Fatal(err)
	}
	if info.Monitors != 0 {
		t.Fatalf("the child has %d monitors after its only watcher was killed", info.Monitors)
	}
}

// TestSpawnMonitorTakenNameNoStrayDown: a SpawnMonitor that fails because
// its Name is taken returns no ref, so no Down may ever reach the caller,
// also when someone kills the published child after the name was refused
// and before the spawn takes the monitor back (the killer's finaliser takes
// the monitor and sends the Down). That Down reached the handler, for a ref
// the caller never saw.
func TestSpawnMonitorTakenNameNoStrayDown(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	holder, err := sys.Spawn(ActorFunc(func(*Context, any) {}), Name("taken"))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Exit(holder, Kill)
	kill := func(child Pid) {
		sys.Exit(child, Kill)
		// The Down is sent by the killer's finaliser before Exit returns.
	}
	testHookSpawnFailed.Store(&kill)
	defer testHookSpawnFailed.Store(nil)
	seen := make(chan any, 16)
	parent, err := sys.Spawn(ActorFunc(func(c *Context, m any) {
		switch m {
		case "go":
			_, _, err := c.SpawnMonitor(ActorFunc(func(*Context, any) {}), Name("taken"))
			seen <- err
		default:
			seen <- m
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(parent, "go")
	if got := <-seen; !errors.Is(got.(error), ErrNameTaken) {
		t.Fatalf("SpawnMonitor: %v, want ErrNameTaken", got)
	}
	testHookSpawnFailed.Store(nil)
	sys.Send(parent, "probe")
	for {
		select {
		case m := <-seen:
			if m == "probe" {
				return
			}
			t.Fatalf("the caller of a failed SpawnMonitor got %#v", m)
		case <-time.After(5 * time.Second):
			t.Fatal("no probe")
		}
	}
}

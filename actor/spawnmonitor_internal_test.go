package actor

import (
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

package supervisor_test

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// draining traps exits; its Terminate blocks until release is closed, as a
// server draining its requests at shutdown does.
type draining struct {
	actor.ServerBase
	started, release chan struct{}
}

func (d draining) Init(c *actor.Context) error { c.TrapExit(true); return nil }
func (d draining) Terminate(*actor.Context, actor.Reason) {
	close(d.started)
	<-d.release
}

// A worker that crashes while Shutdown's ordered stop drains a sibling takes
// its whole subtree down at once: the pool supervisor, not yet told to
// stop, cannot restart it (Spawn is ErrStopped from the moment Shutdown
// begins), retries at once until its intensity runs out (one report per
// try), gives up and stops the other workers, whose work the drain was
// waiting for. In OTP the pool would restart the worker (init:stop stops
// the tree top-down; a subtree not yet told runs and restarts as usual).
func TestNewuser2CrashDuringOrderedShutdownStopsTheSubtree(t *testing.T) {
	reports := make(chan string, 1000)
	sys, err := actor.Start(actor.Config{Logger: func(f string, _ ...any) {
		select {
		case reports <- f:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	idle := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(*actor.Context, any) {}))
	}
	d := draining{started: make(chan struct{}), release: make(chan struct{})}
	top, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{
		supervisor.Child("pool", supervisor.Spec{Intensity: 100, Period: time.Second,
			Children: []supervisor.ChildSpec{{ID: "w1", Start: idle}, {ID: "w2", Start: idle}}}),
		{ID: "drain", Start: supervisor.ServerStart(func(...any) actor.Server { return d }), Shutdown: 10 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	kids, _ := supervisor.WhichChildren(sys, top)
	workers, _ := supervisor.WhichChildren(sys, kids[0].Pid)
	w2, _ := sys.Monitor(workers[1].Pid)

	stopped := make(chan error)
	go func() { stopped <- sys.Shutdown(context.Background()) }()
	<-d.started // the tree stops in reverse order: drain first, pool after it
	defer func() { close(d.release); <-stopped }()
	sys.Exit(workers[0].Pid, "boom")
	select {
	case <-w2.Done():
		t.Fatalf("w2 stopped (%v) while its sibling subtree still drained; the pool had not been told to stop", w2.Reason())
	case <-time.After(200 * time.Millisecond):
	}
}

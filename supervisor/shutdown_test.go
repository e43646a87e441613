package supervisor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
	"go.uber.org/goleak"
)

// Shutdown with a ctx shorter than a child's shutdown timeout: what is left
// is killed, Shutdown returns the ctx error, and no goroutine is left.
func TestShutdownShortCtxKillsWhatIsLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	out := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	spec := serviceTree(out, time.Hour)
	spec.Children[2].Shutdown = supervisor.Infinity // never killed by its supervisor
	sup, err := supervisor.Start(sys, spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err = sys.Shutdown(ctx)
	took := time.Since(t0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the ctx's DeadlineExceeded", err)
	}
	if took > 10*time.Second { // the child it gave up on sleeps for an hour
		t.Errorf("Shutdown took %v with a 300 ms ctx", took)
	}
	if sys.Alive(sup) || sys.Stats().Live != 0 {
		t.Errorf("after Shutdown: sup alive %v, %d live", sys.Alive(sup), sys.Stats().Live)
	}
	// A second Shutdown returns what the first did.
	if err2 := sys.Shutdown(context.Background()); !errors.Is(err2, context.DeadlineExceeded) {
		t.Errorf("second Shutdown = %v", err2)
	}
	mu.Lock()
	t.Logf("took %v; %q", took, lines)
	mu.Unlock()
}

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

// A worker that crashes while Shutdown's ordered stop drains a sibling is
// restarted by its pool supervisor, not yet told to stop, as in OTP
// (init:stop stops the tree top-down; a subtree not yet told runs and
// restarts as usual): its sibling w2 goes on. (If spawns were refused from
// the moment Shutdown began, the pool would retry until its intensity ran
// out, give up and stop the other workers, whose work the drain waits for.)
func TestCrashDuringOrderedShutdownIsRestarted(t *testing.T) {
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

// awaitLive polls Stats().Live until it is want or the deadline passes, and
// returns the last count.
func awaitLive(sys *actor.System, want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		live := sys.Stats().Live
		if live == want || time.Now().After(deadline) {
			return live
		}
		time.Sleep(time.Millisecond)
	}
}

// killsSupOnStop traps exits and, told to stop, kills the supervisor
// registered as "dyn".
type killsSupOnStop struct{ actor.ServerBase }

func (killsSupOnStop) Init(c *actor.Context) error { c.TrapExit(true); return nil }

func (killsSupOnStop) Terminate(c *actor.Context, _ actor.Reason) {
	if sup, ok := c.System().Whereis("dyn"); ok {
		c.Exit(sup, actor.Kill)
	}
}

// TestKilledWhileStoppingDynamicChildrenLeaksNone: a simple_one_for_one
// supervisor killed while it stops its children (here by the first child
// told to stop; in life, by its parent after a finite Shutdown) leaves none
// of them running. OTP 25 keeps each child linked until its DOWN (monitor,
// exit(shutdown), wait, then unlink and flush), so a child is either told
// to stop or killed by the link of its dying supervisor. The supervisor
// unlinked every child first and signalled them after: killed in between,
// it left the children it had unlinked running, with no supervisor, for
// ever.
func TestKilledWhileStoppingDynamicChildrenLeaksNone(t *testing.T) {
	sys := newSys(t)
	dyn, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Name: "dyn",
		Children: []supervisor.ChildSpec{{ID: "w", Start: supervisor.ServerStart(func(...any) actor.Server { return killsSupOnStop{} })}}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for range n {
		if _, err := supervisor.StartChildArgs(sys, dyn); err != nil {
			t.Fatal(err)
		}
	}
	sys.Exit(dyn, actor.Shutdown)
	if live := awaitLive(sys, 0, 5*time.Second); live != 0 {
		t.Fatalf("%d of %d children left running after their supervisor was killed while stopping them", live, n)
	}
}

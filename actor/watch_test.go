package actor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A Watch is a monitor from outside the System: Done closes at the actor's
// exit, for every receiver, and Reason is the exit reason.
func TestWatchSeesExitReason(t *testing.T) {
	sys := start(t, actor.Config{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Atom("boom")) }))
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := sys.Info(pid); info.Monitors != 1 {
		t.Fatalf("the target has %d monitors, want 1", info.Monitors)
	}
	select {
	case <-w.Done():
		t.Fatal("done before the actor exited")
	default:
	}
	if r := w.Reason(); r != nil {
		t.Fatalf("Reason before the exit: %v", r)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // Done is closed, not sent on: every receiver sees it
		wg.Add(1)
		go func() { defer wg.Done(); <-w.Done() }()
	}
	sys.Send(pid, "stop")
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the exit")
	}
	wg.Wait()
	if r := w.Reason(); r != actor.Atom("boom") {
		t.Fatalf("Reason %v, want boom", r)
	}
	if w.Stop() {
		t.Fatal("Stop after the exit reported true")
	}
}

// A dead pid gives a Watch done at once with noproc (DOWN noproc); a
// malformed pid is ErrBadPid; after Shutdown, ErrStopped.
func TestWatchDeadAndBadPids(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
	sys.Send(pid, "stop")
	eventually(t, 5*time.Second, "the actor exits", func() bool { return !sys.Alive(pid) })
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Done():
	default:
		t.Fatal("a Watch of a dead pid is not done at once")
	}
	if r := w.Reason(); r != actor.NoProc {
		t.Fatalf("Reason %v, want noproc", r)
	}
	if _, err := sys.Monitor(actor.Pid{}); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("Monitor of the zero Pid: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sys.Shutdown(ctx)
	if _, err := sys.Monitor(pid); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("Monitor after Shutdown: %v", err)
	}
}

// Stop before the exit removes the record (no leak on a long-lived target)
// and Done then never closes.
func TestWatchStop(t *testing.T) {
	sys := start(t, actor.Config{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Stop() {
		t.Fatal("Stop of a live Watch reported false")
	}
	if w.Stop() {
		t.Fatal("a second Stop reported true")
	}
	if info, _ := sys.Info(pid); info.Monitors != 0 {
		t.Fatalf("the target keeps %d monitors after Stop", info.Monitors)
	}
	sys.Send(pid, "stop")
	eventually(t, 5*time.Second, "the actor exits", func() bool { return !sys.Alive(pid) })
	select {
	case <-w.Done():
		t.Fatal("Done closed after Stop")
	case <-time.After(20 * time.Millisecond):
	}
	if r := w.Reason(); r != nil {
		t.Fatalf("Reason after Stop: %v", r)
	}
}

// Stop racing the exit: either Stop wins (true, Done stays open) or the
// exit does (Stop false, Done closed with the reason); never both, never
// neither.
func TestWatchStopRacesExit(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	for i := 0; i < 300; i++ {
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Atom("bye")) }))
		w, err := sys.Monitor(pid)
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(pid, "stop")
		stopped := w.Stop()
		eventually(t, 5*time.Second, "the actor exits", func() bool { return !sys.Alive(pid) })
		wait := 5 * time.Second // the exit won: Done must close
		if stopped {
			wait = time.Millisecond // Stop won: Done must stay open
		}
		var done bool
		select {
		case <-w.Done():
			done = true
		case <-time.After(wait):
		}
		if stopped == done {
			t.Fatalf("round %d: Stop %v and Done %v (reason %v)", i, stopped, done, w.Reason())
		}
		if done && w.Reason() != actor.Atom("bye") {
			t.Fatalf("round %d: reason %v", i, w.Reason())
		}
	}
}

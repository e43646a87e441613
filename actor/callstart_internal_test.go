package actor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/slot"
)

// TestFailedCallRetiresItsWait: a Call whose request cannot be sent (the
// callee died and its mailbox closed after the call's monitor was made)
// returns ErrNoProc and leaves no wake of its wait behind. The monitor
// fired and woke the caller's wait while it still ran, leaving its word
// Notified: its next park re-queued it for an activation with nothing to do.
func TestFailedCallRetiresItsWait(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	callee, err := sys.Spawn(ActorFunc(func(*Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	hook := func() {
		// Kill the callee and wait for its slot to be reclaimed (its
		// mailbox is then closed) by the other scheduler.
		w, err := sys.Monitor(callee)
		if err != nil {
			return
		}
		sys.Exit(callee, Kill)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		select {
		case <-w.Done():
		case <-ctx.Done():
		}
		for sys.slab.At(callee.idx).Rec() != nil && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}
	testHookCallMonitored.Store(&hook)
	defer testHookCallMonitored.Store(nil)
	type result struct {
		err   error
		state slot.State
	}
	out := make(chan result, 1)
	caller, err := sys.Spawn(ActorFunc(func(c *Context, m any) {
		_, err := c.Call(callee, "req", time.Second)
		_, _, st := c.proc().slot.Word.Snapshot()
		out <- result{err, st}
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(caller, "go")
	select {
	case r := <-out:
		if !errors.Is(r.err, ErrNoProc) {
			t.Fatalf("Call: %v, want ErrNoProc", r.err)
		}
		if r.state != slot.Running {
			t.Fatalf("after the failed call the caller's word is %v, want running", r.state)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no call result")
	}
}

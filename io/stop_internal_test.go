package netio

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A socket registered while Stop (or Shutdown's abort) is stopping the
// poller is refused with ErrClosed: it used to join the poller Stop had
// already snapshotted, keeping it alive, so Stop never returned.
func TestRegisterDuringStopIsRefused(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(t.Context())
	owner, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen(sys, owner, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pollersMu.Lock()
	p := pollers[sys]
	pollersMu.Unlock()
	p.abort() // as Stop does first, before it snapshots the table
	l2, err := Listen(sys, owner, "127.0.0.1:0")
	if !errors.Is(err, ErrClosed) {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("Listen while the poller stops: %v, want ErrClosed", err)
	}
	l.Close()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stopping poller did not exit once its sockets closed")
	}
	l3, err := Listen(sys, owner, "127.0.0.1:0") // a fresh poller afterwards
	if err != nil {
		t.Fatalf("Listen after the stop: %v", err)
	}
	l3.Close()
}

// A poller started after Shutdown has aborted the System's helpers (its
// ctx ran out) has its abort called at once, inside HelperWithAbort:
// startPoller must not hold p.mu then (abort takes it), or its caller
// deadlocked holding pollersMu, and every later socket call of the
// process with it. The late poller is born aborted, refuses
// registrations, and exits.
func TestPollerStartedAfterAbortedShutdown(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// A helper that exits only when aborted: Shutdown's ctx runs out
	// waiting for it, and Shutdown aborts the helpers.
	aborted := make(chan struct{})
	exited := sys.HelperWithAbort(func() { close(aborted) })
	go func() { <-aborted; exited() }()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := sys.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want context.DeadlineExceeded (the helper held it)", err)
	}
	started := make(chan *poller, 1)
	go func() {
		p, err := pollerFor(sys)
		if err != nil {
			t.Error(err)
			started <- nil
			return
		}
		p.mu.Unlock()
		started <- p
	}()
	var p *poller
	select {
	case p = <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("pollerFor after an aborted Shutdown did not return (deadlocked on the poller's lock)")
	}
	if p == nil {
		return
	}
	p.mu.Lock()
	wasAborted := p.aborted
	p.mu.Unlock()
	if !wasAborted {
		t.Error("a poller started after the helpers were aborted is not aborted")
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the late poller, with nothing registered, did not exit")
	}
}

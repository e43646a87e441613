package netio

import (
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

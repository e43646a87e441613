package actor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// After Shutdown, a send by name is ErrStopped, as a send to a pid and a call
// by name are: a publisher that casts to a registered broker and stops at
// ErrStopped got ErrNotRegistered instead, which reads as a missing server
// in a System that still runs.
func TestNewuser11SendNameAfterShutdownIsErrStopped(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("broker"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := sys.Send(pid, 1); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("Send after Shutdown: %v, want ErrStopped", err)
	}
	if _, err := sys.CallName("broker", 1, 0); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("CallName after Shutdown: %v, want ErrStopped", err)
	}
	if err := sys.SendName("broker", 1); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("SendName after Shutdown: %v, want ErrStopped", err)
	}
	if err := actor.CastName(sys, "broker", 1); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("CastName after Shutdown: %v, want ErrStopped", err)
	}
	// And Register (it was ErrNoProc: true, every pid is dead, but unlike
	// Send's; the bad-input sweep).
	if err := sys.Register("again", pid); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("Register after Shutdown: %v, want ErrStopped", err)
	}
}

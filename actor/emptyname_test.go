package actor_test

import (
	"errors"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// TestUnregisterEmptyName: Unregister("") is ErrBadName, as Register("")
// is (it said ErrNotRegistered).
func TestUnregisterEmptyName(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err := sys.Register("", pid); !errors.Is(err, actor.ErrBadName) {
		t.Fatalf("Register(\"\"): %v, want ErrBadName", err)
	}
	if err := sys.Unregister(""); !errors.Is(err, actor.ErrBadName) {
		t.Fatalf("Unregister(\"\"): %v, want ErrBadName", err)
	}
}

package actor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// serverInitActor has the Server's Init on a plain actor: Go would let it
// compile, and Colony would never call it.
type serverInitActor struct{ inited bool }

func (a *serverInitActor) Init(*actor.Context) error   { a.inited = true; return nil }
func (a *serverInitActor) Receive(*actor.Context, any) {}

type nilSafeActor struct{ n int }

func (a *nilSafeActor) Receive(*actor.Context, any) { a.n++ }

type wrongContinue struct{ actor.ServerBase }

func (wrongContinue) HandleCall(c *actor.Context, r actor.Request) { c.Reply(r, nil) }
func (wrongContinue) HandleContinue(c *actor.Context)              {}

type nilServer struct{ actor.ServerBase }

func (s *nilServer) HandleCall(c *actor.Context, r actor.Request) { c.Reply(r, s == nil) }

func TestSpawnRefusesNearMissInit(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	_, err := sys.Spawn(&serverInitActor{})
	if !errors.Is(err, actor.ErrBadBehaviour) {
		t.Fatalf("Spawn of an actor with Init(*Context) error: %v", err)
	}
	for _, want := range []string{"Init", "func(*actor.Context) error", "Init(*actor.Context)", "StartServer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// The verdict is cached per type: the second spawn says the same.
	if _, err2 := sys.Spawn(&serverInitActor{}); !errors.Is(err2, actor.ErrBadBehaviour) || err2.Error() != err.Error() {
		t.Fatalf("second spawn: %v", err2)
	}
	if st := sys.Stats(); st.Live != 0 {
		t.Fatalf("a refused spawn left %d live actors", st.Live)
	}
}

func TestSpawnRefusesTypedNilBehaviour(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	if _, err := sys.Spawn((*nilSafeActor)(nil)); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Fatalf("Spawn((*T)(nil)): %v", err)
	}
	if _, err := actor.StartServer(sys, (*nilServer)(nil)); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Fatalf("StartServer((*T)(nil)): %v", err)
	}
	// A non-nil value of the same type spawns.
	if _, err := sys.Spawn(&nilSafeActor{}); err != nil {
		t.Fatal(err)
	}
	pid, err := actor.StartServer(sys, &nilServer{})
	if err != nil {
		t.Fatal(err)
	}
	if isNil, err := actor.Call[bool](sys, pid, "nil?", 5*time.Second); err != nil || isNil {
		t.Fatalf("call: %v %v", isNil, err)
	}
}

func TestStartServerRefusesNearMissContinue(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	_, err := actor.StartServer(sys, wrongContinue{})
	if !errors.Is(err, actor.ErrBadBehaviour) || !strings.Contains(err.Error(), "HandleContinue") {
		t.Fatalf("StartServer with HandleContinue(*Context): %v", err)
	}
}

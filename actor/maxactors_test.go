package actor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A full slab: ErrTooManyActors, no panic; a supervisor-style retry succeeds
// once a slot is free; Spawned counts only what started; a Name given to a
// refused spawn is not left registered.
func TestFullSlabIsErrTooManyActors(t *testing.T) {
	sys := start(t, actor.Config{MaxActors: 4, Schedulers: 1})
	var pids []actor.Pid
	for i := 0; i < 4; i++ {
		p, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p)
	}
	before := sys.Stats()
	_, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("nu14full"))
	if !errors.Is(err, actor.ErrTooManyActors) {
		t.Fatalf("5th spawn: %v", err)
	}
	if _, ok := sys.Whereis("nu14full"); ok {
		t.Error("refused spawn left its name registered")
	}
	if _, err := actor.StartServer(sys, &actor.ServerBase{}); !errors.Is(err, actor.ErrTooManyActors) {
		t.Errorf("StartServer on a full slab: %v", err)
	}
	if st := sys.Stats(); st.Spawned != before.Spawned || st.Live != 4 {
		t.Errorf("refused spawns changed Stats: %+v -> %+v", before, st)
	}
	w, _ := sys.Monitor(pids[0])
	sys.Exit(pids[0], actor.Kill)
	<-w.Done()
	eventually(t, 5*time.Second, "a slot freed", func() bool {
		_, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		return err == nil
	})
	_ = strings.Contains
}

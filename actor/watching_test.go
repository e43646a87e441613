package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestInfoWatching: ActorInfo.Watching counts the monitors an actor holds
// (process_info(P, monitors)), as Monitors counts those held on it.
func TestInfoWatching(t *testing.T) {
	sys := start(t, actor.Config{})
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	a, _ := sys.Spawn(idle)
	b, _ := sys.Spawn(idle)
	type step struct {
		op  string
		pid actor.Pid
	}
	refs := map[actor.Pid]actor.Ref{}
	done := make(chan struct{}, 8)
	w, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch s := m.(type) {
		case step:
			switch s.op {
			case "monitor":
				refs[s.pid], _ = c.Monitor(s.pid)
			case "demonitor":
				c.Demonitor(refs[s.pid], true)
			}
			done <- struct{}{}
		case actor.Down:
			done <- struct{}{}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	do := func(op string, pid actor.Pid) {
		t.Helper()
		sys.Send(w, step{op, pid})
		<-done
	}
	want := func(watching, monitorsOnA int) {
		t.Helper()
		wi, err := sys.Info(w)
		if err != nil {
			t.Fatal(err)
		}
		if wi.Watching != watching {
			t.Fatalf("Watching = %d, want %d", wi.Watching, watching)
		}
		if ai, err := sys.Info(a); err == nil && ai.Monitors != monitorsOnA {
			t.Fatalf("Monitors on a = %d, want %d", ai.Monitors, monitorsOnA)
		}
	}
	want(0, 0)
	do("monitor", a)
	do("monitor", b)
	want(2, 1)
	do("demonitor", a)
	want(1, 0)
	sys.Exit(b, actor.Kill)
	select {
	case <-done: // the Down was taken
	case <-time.After(5 * time.Second):
		t.Fatal("no Down")
	}
	want(0, 0)
}

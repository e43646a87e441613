package actor_test

import (
	"fmt"
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

// TestInfoGroupMonitors: ActorInfo.GroupMonitors counts the group monitors
// an actor holds (MonitorGroup), apart from Watching: how a subscriber is
// checked for leaked group monitors.
func TestInfoGroupMonitors(t *testing.T) {
	sys := start(t, actor.Config{})
	type op struct {
		monitor bool
		group   string
	}
	refs := map[string]actor.Ref{}
	done := make(chan error, 1)
	w, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		o, ok := m.(op)
		if !ok {
			return
		}
		var err error
		if o.monitor {
			refs[o.group], _, err = c.MonitorGroup(o.group)
		} else if !c.DemonitorGroup(refs[o.group]) {
			err = fmt.Errorf("DemonitorGroup(%s) found no monitor", o.group)
		}
		done <- err
	}))
	if err != nil {
		t.Fatal(err)
	}
	do := func(o op) {
		t.Helper()
		sys.Send(w, o)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	want := func(n int) {
		t.Helper()
		info, err := sys.Info(w)
		if err != nil {
			t.Fatal(err)
		}
		if info.GroupMonitors != n || info.Watching != 0 {
			t.Fatalf("GroupMonitors = %d, Watching = %d; want %d, 0", info.GroupMonitors, info.Watching, n)
		}
	}
	want(0)
	do(op{true, "a"})
	do(op{true, "b"})
	want(2)
	do(op{false, "a"})
	want(1)
	do(op{false, "b"})
	want(0)
}

package actor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

func TestBadInput(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1, MaxActors: 8})
	if _, err := sys.Spawn(nil); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Fatalf("nil behaviour: %v", err)
	}
	if err := sys.Send(actor.Pid{}, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("zero pid: %v", err)
	}
	other := start(t, actor.Config{Schedulers: 1})
	foreign, _ := other.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err := sys.Send(foreign, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("pid of another system: %v", err)
	}
	// A full slab is an error, not a panic, and loses nothing.
	block := make(chan struct{})
	var pids []actor.Pid
	for {
		pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			if m == "stop" {
				c.Stop(actor.Normal)
			}
		}))
		if errors.Is(err, actor.ErrTooManyActors) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	close(block)
	if len(pids) != 8 {
		t.Fatalf("spawned %d of 8", len(pids))
	}
	// A stale pid is inert: after the slot is reused, the old pid reaches
	// nobody.
	dead := pids[0]
	sys.Send(dead, "stop")
	eventually(t, 5*time.Second, "actor exit", func() bool { return !sys.Alive(dead) })
	// The slot goes back to the free list after the exit is visible (links
	// and monitors are told first), so a full slab frees up shortly after.
	var fresh actor.Pid
	eventually(t, 5*time.Second, "slot reclaimed", func() bool {
		var err error
		fresh, err = sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { t.Errorf("stale pid reached the new tenant: %v", m) }))
		if err != nil && !errors.Is(err, actor.ErrTooManyActors) {
			t.Fatal(err)
		}
		return err == nil
	})
	if err := sys.Send(dead, "hello"); err != nil {
		t.Fatalf("send to a dead pid must succeed silently: %v", err)
	}
	if _, err := sys.Info(dead); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("Info of dead pid: %v", err)
	}
	if _, err := sys.Call(dead, 1, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("Call to a dead pid: %v", err)
	}
	if _, err := sys.Call(fresh, 1, -time.Second); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Fatalf("negative timeout: %v", err)
	}
	if st := sys.Stats(); st.Dropped == 0 {
		t.Fatal("the send to a dead pid was not counted")
	}
	// A stopped system refuses work with ErrStopped.
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {})); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("spawn after shutdown: %v", err)
	}
}

func TestPanicBecomesExitReason(t *testing.T) {
	var logged strings.Builder
	sys := start(t, actor.Config{Schedulers: 2, Logger: func(f string, a ...any) { logged.WriteString(f) }})
	crasher, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { panic("boom") }))
	downs := make(chan actor.Down, 1)
	watcher := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case string:
			c.Monitor(crasher)
			c.Send(crasher, "go")
		case actor.Down:
			downs <- v
		}
	}))
	sys.Send(watcher, "start")
	d := recv(t, downs)
	p, ok := d.Reason.(actor.Panic)
	if !ok || p.Value != "boom" || !strings.Contains(p.Stack, "api_test.go") {
		t.Fatalf("reason %#v", d.Reason)
	}
	// The system keeps running.
	v, err := actor.Call[int](sys, mustSpawn(t, sys, doubler()), 21, time.Second)
	if v != 42 || err != nil {
		t.Fatal(v, err)
	}
}

func TestIntrospection(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	gate := make(chan struct{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if m == "block" {
			<-gate
		}
	}))
	sys.Send(pid, 1)
	sys.Send(pid, 2)
	eventually(t, 5*time.Second, "two messages handled", func() bool {
		i, _ := sys.Info(pid)
		return i.Handled == 2 && i.State == "parked"
	})
	close(gate)
	st := sys.Stats()
	if st.Live != 1 || len(st.Schedulers) != 1 || st.Schedulers[0].Activations == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// helpers

func mustSpawn(t testing.TB, sys *actor.System, a actor.Actor, opts ...actor.SpawnOption) actor.Pid {
	t.Helper()
	pid, err := sys.Spawn(a, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func doubler() actor.Actor {
	return actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, r.Msg.(int)*2)
		}
	})
}

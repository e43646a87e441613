package actor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// inActor runs f inside a fresh actor of sys and returns when it has run.
func inActor(t *testing.T, sys *actor.System, f func(c *actor.Context)) {
	t.Helper()
	done := make(chan struct{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "run" {
			return
		}
		defer close(done)
		f(c)
	}))
	sys.Send(pid, "run")
	recv(t, done)
}

// deadPid returns the pid of an actor of sys that has exited.
func deadPid(t *testing.T, sys *actor.System) actor.Pid {
	t.Helper()
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
	sys.Send(pid, "stop")
	eventually(t, 5*time.Second, "actor exit", func() bool { return !sys.Alive(pid) })
	return pid
}

// TestBadLinkMonitorInput: Link, Monitor and Exit of a malformed pid (the
// zero Pid, another System's) are ErrBadPid and change nothing; of a dead
// pid, Link is ErrNoProc and Monitor a Down{noproc}.
func TestBadLinkMonitorInput(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	other := start(t, actor.Config{Schedulers: 1})
	foreign := mustSpawn(t, other, actor.ActorFunc(func(*actor.Context, any) {}))
	dead := deadPid(t, sys)
	for _, tc := range []struct {
		name string
		pid  actor.Pid
	}{{"zero pid", actor.Pid{}}, {"another System's pid", foreign}} {
		if err := sys.Exit(tc.pid, actor.Kill); !errors.Is(err, actor.ErrBadPid) {
			t.Errorf("System.Exit of %s: %v, want ErrBadPid", tc.name, err)
		}
		if err := sys.Register("bad", tc.pid); !errors.Is(err, actor.ErrBadPid) {
			t.Errorf("Register of %s: %v, want ErrBadPid", tc.name, err)
		}
		if err := sys.JoinGroup("g", tc.pid); !errors.Is(err, actor.ErrBadPid) {
			t.Errorf("JoinGroup of %s: %v, want ErrBadPid", tc.name, err)
		}
		inActor(t, sys, func(c *actor.Context) {
			if err := c.Link(tc.pid); !errors.Is(err, actor.ErrBadPid) {
				t.Errorf("Link of %s: %v, want ErrBadPid", tc.name, err)
			}
			if ref, err := c.Monitor(tc.pid); !errors.Is(err, actor.ErrBadPid) || ref != 0 {
				t.Errorf("Monitor of %s: %v, %v; want 0, ErrBadPid", tc.name, ref, err)
			}
			if err := c.Exit(tc.pid, actor.Kill); !errors.Is(err, actor.ErrBadPid) {
				t.Errorf("Context.Exit of %s: %v, want ErrBadPid", tc.name, err)
			}
			if err := c.Unlink(tc.pid); !errors.Is(err, actor.ErrBadPid) {
				t.Errorf("Unlink of %s: %v, want ErrBadPid", tc.name, err)
			}
			if info, _ := c.System().Info(c.Self()); info.Links != 0 || info.Monitors != 0 {
				t.Errorf("bad %s left links/monitors: %+v", tc.name, info)
			}
			// Nothing was delivered for the malformed pid.
			if m, err := c.Receive(nil, 0); err == nil {
				t.Errorf("bad %s produced a message: %#v", tc.name, m)
			}
		})
	}
	if !other.Alive(foreign) {
		t.Error("the foreign actor was touched")
	}
	// A dead pid of this System: Link fails with ErrNoProc (a non-trapping
	// caller gets no message), Monitor succeeds with an immediate noproc Down.
	inActor(t, sys, func(c *actor.Context) {
		if err := c.Link(dead); !errors.Is(err, actor.ErrNoProc) {
			t.Errorf("Link of a dead pid: %v, want ErrNoProc", err)
		}
		if err := c.Unlink(dead); err != nil {
			t.Errorf("Unlink of a dead pid: %v, want nil (unlink/1 returns true)", err)
		}
		ref, err := c.Monitor(dead)
		if err != nil || ref == 0 {
			t.Fatalf("Monitor of a dead pid: %v, %v", ref, err)
		}
		m, err := c.Receive(nil, 0)
		if d, ok := m.(actor.Down); err != nil || !ok || d.Ref != ref || d.Pid != dead || d.Reason != actor.Reason(actor.NoProc) {
			t.Errorf("Monitor of a dead pid: got %#v, %v; want Down{noproc}", m, err)
		}
		if c.Demonitor(12345, true) {
			t.Error("Demonitor of an unknown ref reported an active monitor")
		}
	})
}

// TestBadRegistryInput: each misuse of the registry is a distinct sentinel
// error that names the name, and changes nothing.
func TestBadRegistryInput(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	live := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	live2 := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	dead := deadPid(t, sys)

	check := func(what string, err, want error, name string) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", what, err, want)
			return
		}
		if name != "" && !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("%s: error %q does not name %q", what, err, name)
		}
	}
	check("Register of a dead pid", sys.Register("w", dead), actor.ErrNoProc, "")
	check("Register of the empty name", sys.Register("", live), actor.ErrBadName, "")
	check("Unregister of an unknown name", sys.Unregister("nobody"), actor.ErrNotRegistered, "nobody")
	check("SendName to an unknown name", sys.SendName("nobody", 1), actor.ErrNotRegistered, "nobody")
	check("JoinGroup of a dead pid", sys.JoinGroup("g", dead), actor.ErrNoProc, "")
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("")); !errors.Is(err, actor.ErrBadName) {
		t.Errorf("Spawn with Name(\"\"): %v, want ErrBadName", err)
	}
	if err := sys.Register("w", live); err != nil {
		t.Fatal(err)
	}
	check("Register of a taken name", sys.Register("w", live2), actor.ErrNameTaken, "w")
	check("Register of a named actor", sys.Register("w2", live), actor.ErrAlreadyNamed, "w2")
	inActor(t, sys, func(c *actor.Context) {
		check("Context.Register of a taken name", c.Register("w"), actor.ErrNameTaken, "w")
		check("Context.Register of the empty name", c.Register(""), actor.ErrBadName, "")
	})
	// Nothing changed: w is still live's, and no other name exists.
	if p, ok := sys.Whereis("w"); !ok || p != live {
		t.Errorf("Whereis(w) = %v, %v after failed registrations", p, ok)
	}
	if names := sys.Registered(); len(names) != 1 {
		t.Errorf("registered names %v, want [w]", names)
	}
	if m := sys.GroupMembers("g"); len(m) != 0 {
		t.Errorf("group g has members %v", m)
	}
	check("Unregister twice", func() error { sys.Unregister("w"); return sys.Unregister("w") }(), actor.ErrNotRegistered, "w")
}

// TestNilContext: Wait and Shutdown with a nil context.Context are
// ErrNilContext and leave the System as it was (it used to panic inside
// Shutdown, after the System had started stopping).
func TestNilContext(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	//lint:ignore SA1012 a nil Context is the bad input under test
	if err := sys.Shutdown(nil); !errors.Is(err, actor.ErrNilContext) {
		t.Fatalf("Shutdown(nil): %v, want ErrNilContext", err)
	}
	//lint:ignore SA1012 as above
	if err := sys.Wait(nil); !errors.Is(err, actor.ErrNilContext) {
		t.Fatalf("Wait(nil): %v, want ErrNilContext", err)
	}
	if !sys.Alive(pid) {
		t.Fatal("Shutdown(nil) stopped an actor")
	}
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {})); err != nil {
		t.Fatalf("Spawn after Shutdown(nil): %v; the System must be untouched", err)
	}
}

// TestBadConfig: a negative count, or one past its limit, is ErrBadConfig
// naming the field (negative values used to take the default silently); the
// zero Config and a negative WatchdogThreshold (no watchdog) are fine.
func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg   actor.Config
		field string
	}{
		{actor.Config{Schedulers: -1}, "Schedulers"},
		{actor.Config{Schedulers: 1025}, "Schedulers"},
		{actor.Config{MaxActors: -5}, "MaxActors"},
		{actor.Config{MaxActors: 1<<31 + 1}, "MaxActors"},
		{actor.Config{Budget: -1}, "Budget"},
		{actor.Config{MaxSpareWorkers: -1}, "MaxSpareWorkers"},
	} {
		sys, err := actor.Start(tc.cfg)
		if !errors.Is(err, actor.ErrBadConfig) || !strings.Contains(err.Error(), tc.field) || sys != nil {
			t.Errorf("Start(%+v) = %v, %v; want ErrBadConfig naming %s", tc.cfg, sys, err, tc.field)
		}
	}
	start(t, actor.Config{WatchdogThreshold: -1}) // no watchdog: valid
}

// TestBadBehaviourAndStoppedCalls: a nil ActorFunc is ErrNilBehaviour (it
// used to be accepted and crash at its first message); a Call after
// Shutdown is ErrStopped, as a Send is.
func TestBadBehaviourAndStoppedCalls(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var nilFunc actor.ActorFunc
	if _, err := sys.Spawn(nilFunc); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Errorf("Spawn(nil ActorFunc): %v, want ErrNilBehaviour", err)
	}
	pid := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Call(pid, 1, time.Second); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("Call after Shutdown: %v, want ErrStopped", err)
	}
	if err := sys.Send(pid, 1); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("Send after Shutdown: %v, want ErrStopped", err)
	}
}

// TestNilServer: StartServer and SpawnServer with a nil Server, or a nil
// System, return an error (they used to panic).
func TestNilServer(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	if _, err := actor.StartServer(nil, &actor.ServerBase{}); !errors.Is(err, actor.ErrNilSystem) {
		t.Errorf("StartServer(nil System): %v, want ErrNilSystem", err)
	}
	if _, err := actor.StartServer(sys, nil); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Errorf("StartServer(nil Server): %v, want ErrNilBehaviour", err)
	}
	inActor(t, sys, func(c *actor.Context) {
		if _, err := actor.SpawnServer(c, nil); !errors.Is(err, actor.ErrNilBehaviour) {
			t.Errorf("SpawnServer(nil Server): %v, want ErrNilBehaviour", err)
		}
	})
}

// TestNoTimerAfterShutdown: a timer armed by a Call or SendAfter that passed
// its stopping check before Shutdown finished is not left pending in the
// stopped System's wheel (found in review).
func TestNoTimerAfterShutdown(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 1})
	if err != nil {
		t.Fatal(err)
	}
	pid := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sys.ArmAfterShutdown(pid); n != 0 {
		t.Fatalf("%d timers pending after Shutdown", n)
	}
}

// Deliver is Send without the mailbox bound: a full bounded mailbox refuses
// Send but takes Deliver, in order with the sender's earlier messages; to a
// dead pid it is dropped and counted; a malformed pid is ErrBadPid.
func TestDeliverIgnoresTheBound(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	gate := make(chan struct{})
	got := make(chan any, 8)
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if m == "hold" {
			<-gate
			return
		}
		got <- m
	}), actor.MailboxBound(2))
	sys.Send(pid, "hold")
	eventually(t, 5*time.Second, "the hold taken", func() bool {
		i, _ := sys.Info(pid)
		return i.State == "running"
	})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	// "hold" is being handled, not queued: the bound of 2 takes two more.
	for i := 1; i <= 2; i++ {
		if err := sys.Send(pid, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := sys.Send(pid, 0); !errors.Is(err, actor.ErrMailboxFull) {
		t.Fatalf("Send to a full mailbox: %v, want ErrMailboxFull", err)
	}
	if err := sys.Deliver(pid, 3); err != nil {
		t.Fatalf("Deliver to a full mailbox: %v", err)
	}
	close(gate)
	if a, b, c := recv(t, got), recv(t, got), recv(t, got); a != 1 || b != 2 || c != 3 {
		t.Fatalf("got %v, %v, %v; want 1, 2, 3", a, b, c)
	}
	dead := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
	sys.Send(dead, "die")
	eventually(t, 5*time.Second, "the death", func() bool { return !sys.Alive(dead) })
	before := sys.Stats().Dropped
	if err := sys.Deliver(dead, "late"); err != nil {
		t.Fatalf("Deliver to a dead pid: %v", err)
	}
	if d := sys.Stats().Dropped - before; d != 1 {
		t.Fatalf("Dropped rose by %d, want 1", d)
	}
	if err := sys.Deliver(actor.Pid{}, "x"); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("Deliver to the zero pid: %v", err)
	}
}

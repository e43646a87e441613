package actor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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
// stopped System's wheel.
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

// TestTimerRefOfAnotherSystemNamesNoTimer: a TimerRef names a timer of the System that
// made it. Given to another System's CancelTimer or ReadTimer it names no
// timer there: false, and that System's own timers are untouched. (The
// wheel's handles are numbered per System from the same start, so a ref
// from one System matched a timer of another: CancelTimer cancelled it.)
func TestTimerRefOfAnotherSystemNamesNoTimer(t *testing.T) {
	a := start(t, actor.Config{Schedulers: 1})
	b := start(t, actor.Config{Schedulers: 1})
	got := make(chan any, 4)
	sink := func(sys *actor.System) actor.Pid {
		return mustSpawn(t, sys, actor.ActorFunc(func(_ *actor.Context, m any) { got <- m }))
	}
	pa, pb := sink(a), sink(b)
	for _, kind := range []string{"SendAfter", "StartTimer", "SendInterval"} {
		arm := func(sys *actor.System, pid actor.Pid, msg any) actor.TimerRef {
			t.Helper()
			var ref actor.TimerRef
			var err error
			switch kind {
			case "SendAfter":
				ref, err = sys.SendAfter(pid, msg, time.Hour)
			case "StartTimer":
				ref, err = sys.StartTimer(pid, msg, time.Hour)
			case "SendInterval":
				ref, err = sys.SendInterval(pid, msg, time.Hour)
			}
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			return ref
		}
		ra := arm(a, pa, "a")
		rb := arm(b, pb, "b")
		if _, ok := b.ReadTimer(ra); ok {
			t.Errorf("%s: System b's ReadTimer read a's timer", kind)
		}
		if b.CancelTimer(ra) {
			t.Errorf("%s: System b's CancelTimer of a's ref reported a timer cancelled", kind)
		}
		if _, ok := b.ReadTimer(rb); !ok {
			t.Errorf("%s: b's own timer is gone after b.CancelTimer of a's ref", kind)
		}
		if _, ok := a.ReadTimer(ra); !ok {
			t.Errorf("%s: a's timer is gone after b.CancelTimer of it", kind)
		}
		inActor(t, b, func(c *actor.Context) {
			if c.CancelTimer(ra) {
				t.Errorf("%s: Context.CancelTimer of another System's ref reported true", kind)
			}
		})
		if !a.CancelTimer(ra) || !b.CancelTimer(rb) {
			t.Errorf("%s: a timer was not pending for its own System's CancelTimer", kind)
		}
	}
	select {
	case m := <-got:
		t.Fatalf("a cancelled timer sent %v", m)
	default:
	}
	if err := b.Send(pa, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("sanity: Send of a's pid through b: %v", err)
	}
}

// mustPanic runs f and returns the panic's message, failing the test if f
// does not panic.
func mustPanic(t *testing.T, what string, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", what)
		}
		msg, _ = r.(string)
	}()
	f()
	return ""
}

// TestHoldOrTransferOfNilPanics: Hold of a nil io.Closer, and Transfer of a
// nil release or closer, are misuse and panic at the call with a message
// that says so, holding nothing. (Hold took the nil closer, and the
// owner's death then called its Close in the finaliser: a nil-pointer
// panic outside any handler, which ended the process; a nil release
// panicked in Transfer after the new owner's hold was made, which kept
// Wait from ever returning.)
func TestHoldOrTransferOfNilPanics(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	owner := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	other := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	msg := mustPanic(t, "Hold(pid, nil)", func() {
		if rel, err := sys.Hold(owner, nil); err == nil {
			rel() // no panic: undo, or the owner's death would crash the test binary
		}
	})
	if !strings.Contains(msg, "nil io.Closer") {
		t.Errorf("Hold(pid, nil) panicked with %q, want it to name the nil io.Closer", msg)
	}
	rel, err := sys.Hold(owner, closerFunc(func() error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	msg = mustPanic(t, "Transfer(nil, ...)", func() {
		if nr, err := sys.Transfer(nil, other, closerFunc(func() error { return nil })); err == nil {
			nr()
		}
	})
	if !strings.Contains(msg, "nil release") {
		t.Errorf("Transfer(nil release) panicked with %q, want it to name the nil release", msg)
	}
	mustPanic(t, "Transfer(rel, pid, nil)", func() {
		if nr, err := sys.Transfer(rel, other, nil); err == nil {
			nr()
		}
	})
	// Nothing was held for other, and owner's hold is still there.
	if !rel() {
		t.Fatal("the owner's hold was taken by a refused Transfer")
	}
	for _, p := range []actor.Pid{owner, other} {
		sys.Exit(p, actor.Kill)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Wait(ctx); err != nil {
		t.Fatalf("Wait after the owners died: %v (a refused Hold or Transfer left a hold)", err)
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// TestTypedNilServerIsNilBehaviour: Typed of a nil TypedServer is a nil behaviour, so
// StartServer and SpawnServer of it are ErrNilBehaviour and start nothing,
// as for a nil Server. (Typed wrapped the nil, the wrapper is not nil, and
// the server was spawned and panicked in Init: a crash report and a
// *StartError with a nil-pointer Panic.)
func TestTypedNilServerIsNilBehaviour(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	sys := start(t, actor.Config{Schedulers: 1, Logger: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&logged, f+"\n", a...)
	}})
	before := sys.Stats()
	if _, err := actor.StartServer(sys, actor.Typed[int, int, int](nil)); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Errorf("StartServer(Typed(nil)): %v, want ErrNilBehaviour", err)
	}
	inActor(t, sys, func(c *actor.Context) {
		if _, err := actor.SpawnServer(c, actor.Typed[int, int, int](nil)); !errors.Is(err, actor.ErrNilBehaviour) {
			t.Errorf("SpawnServer(Typed(nil)): %v, want ErrNilBehaviour", err)
		}
	})
	// inActor's own actor is the one spawn expected.
	if n := sys.Stats().Spawned - before.Spawned; n != 1 {
		t.Errorf("%d actors spawned, want only inActor's", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if logged.Len() != 0 {
		t.Errorf("reports logged: %s", logged.String())
	}
}

// TestNegativeMailboxBoundIsBadOption: a Spawn with MailboxBound of a
// negative count fails with ErrBadOption and starts nothing (it was taken
// silently as unbounded); 0 is unbounded, as documented.
func TestNegativeMailboxBoundIsBadOption(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	before := sys.Stats().Live
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.MailboxBound(-1)); !errors.Is(err, actor.ErrBadOption) ||
		!strings.Contains(err.Error(), "negative") {
		t.Errorf("Spawn with MailboxBound(-1): %v, want ErrBadOption saying the bound is negative", err)
	}
	if live := sys.Stats().Live; live != before {
		t.Errorf("a refused Spawn left %d actors live, %d before", live, before)
	}
	gate := make(chan struct{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) { <-gate }), actor.MailboxBound(0))
	defer close(gate)
	for i := 0; i < 100; i++ {
		if err := sys.Send(pid, i); err != nil {
			t.Fatalf("MailboxBound(0) refused send %d: %v", i, err)
		}
	}
}

// TestReplyThroughAnotherSystemPanics: answering an actor's call through
// another System than the caller's is a misuse and panics with a message
// saying so, leaving the call pending, so the right System's Reply still
// reaches the caller. (The other System took the caller for dead: it
// failed the call with ErrNoProc, counted a late reply, and woke nobody,
// so the caller waited out its whole timeout, for ever with Infinity.)
func TestReplyThroughAnotherSystemPanics(t *testing.T) {
	a := start(t, actor.Config{Schedulers: 2})
	b := start(t, actor.Config{Schedulers: 1})
	reqs := make(chan actor.Request, 1)
	srv := mustSpawn(t, a, actor.ActorFunc(func(_ *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			reqs <- r
		}
	}))
	type result struct {
		v   any
		err error
	}
	res := make(chan result, 1)
	caller := mustSpawn(t, a, actor.ActorFunc(func(c *actor.Context, _ any) {
		v, err := c.Call(srv, "q", 5*time.Second)
		res <- result{v, err}
	}))
	a.Send(caller, "go")
	req := recv(t, reqs)
	msg := mustPanic(t, "b.Reply of a's call", func() { b.Reply(req, "wrong") })
	if !strings.Contains(msg, "another System") {
		t.Errorf("b.Reply of a's call panicked with %q, want it to name the misuse", msg)
	}
	if !a.Waiting(req) {
		t.Error("the call ended with the refused Reply")
	}
	if !a.Reply(req, "right") {
		t.Error("a.Reply after the refused one was not taken")
	}
	select {
	case r := <-res:
		if r.err != nil || r.v != "right" {
			t.Errorf("the call returned %v, %v; want \"right\"", r.v, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the caller was not woken by its reply")
	}
	if n := b.Stats().LateReplies + a.Stats().LateReplies; n != 0 {
		t.Errorf("%d late replies counted", n)
	}
}

// Bad Config values an operator's flags could feed in.
func TestConfigExtremes(t *testing.T) {
	bad := []actor.Config{
		{Schedulers: -1},
		{MaxActors: -1},
		{Budget: -1},
		{MaxSpareWorkers: -1},
		{Schedulers: 1 << 20},
		{MaxActors: 1 << 62},
	}
	for _, cfg := range bad {
		sys, err := actor.Start(cfg)
		if err == nil {
			sys.Shutdown(context.Background())
			t.Errorf("Start(%+v) = nil error", cfg)
			continue
		}
		if !errors.Is(err, actor.ErrBadConfig) {
			t.Errorf("Start(%+v) = %v, want ErrBadConfig", cfg, err)
		}
	}
	// Valid odd values: negative watchdog (off), zero everything, nil Logger.
	for _, cfg := range []actor.Config{{WatchdogThreshold: -1}, {}, {MaxActors: 1, Schedulers: 1, Budget: 1, MaxSpareWorkers: 0}} {
		sys, err := actor.Start(cfg)
		if err != nil {
			t.Errorf("Start(%+v): %v", cfg, err)
			continue
		}
		p, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if r, ok := msg.(actor.Request); ok {
				c.Reply(r, 1)
			}
		}))
		if err != nil {
			t.Errorf("Spawn with %+v: %v", cfg, err)
		} else if _, err := sys.Call(p, 0, time.Second); err != nil {
			t.Errorf("Call with %+v: %v", cfg, err)
		}
		if err := sys.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown with %+v: %v", cfg, err)
		}
	}
}

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

// TestBadInput9ForeignTimerRef: a TimerRef names a timer of the System that
// made it. Given to another System's CancelTimer or ReadTimer it names no
// timer there: false, and that System's own timers are untouched. (The
// wheel's handles are numbered per System from the same start, so a ref
// from one System matched a timer of another: CancelTimer cancelled it.)
func TestBadInput9ForeignTimerRef(t *testing.T) {
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

// TestBadInput9HoldNilCloser: Hold of a nil io.Closer, and Transfer of a
// nil release or closer, are misuse and panic at the call with a message
// that says so, holding nothing. (Hold took the nil closer, and the
// owner's death then called its Close in the finaliser: a nil-pointer
// panic outside any handler, which ended the process; a nil release
// panicked in Transfer after the new owner's hold was made, which kept
// Wait from ever returning.)
func TestBadInput9HoldNilCloser(t *testing.T) {
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

// TestBadInput9TypedNil: Typed of a nil TypedServer is a nil behaviour, so
// StartServer and SpawnServer of it are ErrNilBehaviour and start nothing,
// as for a nil Server. (Typed wrapped the nil, the wrapper is not nil, and
// the server was spawned and panicked in Init: a crash report and a
// *StartError with a nil-pointer Panic.)
func TestBadInput9TypedNil(t *testing.T) {
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

// TestBadInput9NegativeMailboxBound: a Spawn with MailboxBound of a
// negative count fails with ErrBadOption and starts nothing (it was taken
// silently as unbounded); 0 is unbounded, as documented.
func TestBadInput9NegativeMailboxBound(t *testing.T) {
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

// TestBadInput9ReplyThroughAnotherSystem: answering an actor's call through
// another System than the caller's is a misuse and panics with a message
// saying so, leaving the call pending, so the right System's Reply still
// reaches the caller. (The other System took the caller for dead: it
// failed the call with ErrNoProc, counted a late reply, and woke nobody,
// so the caller waited out its whole timeout, for ever with Infinity.)
func TestBadInput9ReplyThroughAnotherSystem(t *testing.T) {
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
	case <-time.After(2 * time.Second):
		t.Error("the caller was not woken by its reply")
	}
	if n := b.Stats().LateReplies + a.Stats().LateReplies; n != 0 {
		t.Errorf("%d late replies counted", n)
	}
}

package actor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"pgregory.net/rapid"
)

// A calls B, and B calls A back: A is blocked in its call, so B's call to A
// times out; then B replies and A's call completes. Neither deadlocks a
// scheduler: with one scheduler, a third actor keeps answering meanwhile.
func TestCallCycleNoSchedulerDeadlock(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	results := make(chan any, 2)
	var a, b actor.Pid
	b = mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			_, err := c.Call(a, "back", 50*time.Millisecond)
			results <- err
			c.Reply(r, "b-done")
		}
	}))
	a = mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if m == "go" {
			v, err := c.Call(b, "hi", 5*time.Second)
			results <- []any{v, err}
		}
	}))
	other := mustSpawn(t, sys, doubler())
	sys.Send(a, "go")
	for i := 0; i < 10; i++ { // meanwhile, others run
		if v, err := actor.Call[int](sys, other, i, time.Second); err != nil || v != 2*i {
			t.Fatal(v, err)
		}
	}
	if err, _ := recv(t, results).(error); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("B's call back to A: %v", err)
	}
	got := recv(t, results).([]any)
	if got[0] != "b-done" || got[1] != nil {
		t.Fatalf("A's call: %v", got)
	}
	// The timed-out reply (A never answered "back") leaves nothing behind.
	if st := sys.Stats(); st.LateReplies != 0 {
		t.Fatalf("late replies %d", st.LateReplies)
	}
}

// 1,000 actors blocked in calls at once on 2 schedulers, while other
// actors keep handling messages.
func TestThousandBlockedCalls(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	release := make(chan struct{})
	var pending []actor.Request
	holder := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case actor.Request: // defer every reply
			pending = append(pending, v)
			if len(pending) == 1000 {
				close(release)
			}
		case string:
			for _, r := range pending {
				c.Reply(r, "ok")
			}
		}
	}))
	var done atomic.Int64
	for i := 0; i < 1000; i++ {
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			if v, err := c.Call(holder, "wait", 30*time.Second); err == nil && v == "ok" {
				done.Add(1)
			}
		}))
		sys.Send(pid, "go")
	}
	recv(t, release)
	// All 1,000 are blocked in Call; the schedulers still serve others.
	other := mustSpawn(t, sys, doubler())
	for i := 0; i < 100; i++ {
		if v, err := actor.Call[int](sys, other, i, time.Second); err != nil || v != 2*i {
			t.Fatal(v, err)
		}
	}
	if done.Load() != 0 {
		t.Fatal("calls returned before the reply")
	}
	st := sys.Stats()
	if st.Workers < 1000 {
		t.Fatalf("only %d goroutines for 1000 blocked handlers", st.Workers)
	}
	sys.Send(holder, "reply all")
	eventually(t, 10*time.Second, "all calls answered", func() bool { return done.Load() == 1000 })
	// Once answered, the handlers' goroutines return to the pool or exit:
	// idle actors own no goroutine.
	eventually(t, 10*time.Second, "goroutines released", func() bool {
		return sys.Stats().Workers <= 2+2*2+4
	})
}

// A call that times out never leaves a stray reply in the caller's mailbox.
func TestCallTimeoutNoStrayReply(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	var held actor.Request
	slow := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case actor.Request:
			held = v
		case string:
			if c.Reply(held, "late") {
				t.Error("a late reply was accepted")
			}
		}
	}))
	got := make(chan any, 4)
	caller := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch m {
		case "call":
			_, err := c.Call(slow, "x", 20*time.Millisecond)
			got <- err
		default:
			got <- m // anything else reaching the handler
		}
	}))
	sys.Send(caller, "call")
	if err, _ := recv(t, got).(error); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	sys.Send(slow, "reply now")
	eventually(t, 5*time.Second, "late reply counted", func() bool { return sys.Stats().LateReplies == 1 })
	sys.Send(caller, "marker")
	if m := recv(t, got); m != "marker" {
		t.Fatalf("stray message in the caller's mailbox: %v", m)
	}
}

// A callee that dies mid-call fails the call with ErrNoProc at once, not at
// the timeout.
func TestCalleeDiesMidCall(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	callee := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if _, ok := m.(actor.Request); ok {
			c.Stop("crash")
		}
	}))
	begin := time.Now()
	_, err := sys.Call(callee, "x", time.Minute)
	if !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("want ErrNoProc, got %v", err)
	}
	if el := time.Since(begin); el > 10*time.Second {
		t.Fatalf("ErrNoProc took %v: waited for the timeout", el)
	}
	// From inside an actor too.
	callee2 := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if _, ok := m.(actor.Request); ok {
			c.Stop("crash")
		}
	}))
	errs := make(chan error, 1)
	a := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		_, err := c.Call(callee2, "x", 10*time.Second)
		errs <- err
	}))
	sys.Send(a, "go")
	if err := recv(t, errs); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("want ErrNoProc, got %v", err)
	}
	if _, err := sys.Call(a, "x", time.Second); err == nil {
		t.Log("a answered a call it ignores? (it never replies; timeout expected)")
	}
}

func TestCallSelf(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	errs := make(chan error, 1)
	a := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		_, err := c.Call(c.Self(), "x", time.Second)
		errs <- err
	}))
	sys.Send(a, 1)
	if err := recv(t, errs); !errors.Is(err, actor.ErrCallSelf) {
		t.Fatalf("want ErrCallSelf, got %v", err)
	}
}

// Selective receive takes the first match and keeps the skipped messages in
// their order for later.
func TestSelectiveReceiveOrder(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	seen := make(chan any, 16)
	a := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if m == "start" {
			v, err := c.Receive(func(m any) bool { return m == "wanted" }, 5*time.Second)
			seen <- []any{"received", v, err}
			_, err = c.Receive(func(m any) bool { return m == "never" }, 10*time.Millisecond)
			seen <- err
			return
		}
		seen <- m
	}))
	sys.Send(a, "start")
	for _, m := range []any{1, 2, 3, "wanted", 4} {
		sys.Send(a, m)
	}
	if got := recv(t, seen).([]any); got[1] != "wanted" || got[2] != nil {
		t.Fatalf("receive: %v", got)
	}
	if err, _ := recv(t, seen).(error); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	for _, want := range []any{1, 2, 3, 4} {
		if got := recv(t, seen); got != want {
			t.Fatalf("skipped messages out of order: got %v want %v", got, want)
		}
	}
}

// A handler spinning for a second does not stop the others, even with one
// scheduler: the watchdog hands the role to a fresh goroutine.
func TestSpinningHandlerDoesNotStarve(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1, WatchdogThreshold: 10 * time.Millisecond})
	var stop, spinning atomic.Bool
	spun := make(chan struct{})
	spinner := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		defer close(spun)
		spinning.Store(true)
		for end := time.Now().Add(30 * time.Second); !stop.Load() && time.Now().Before(end); {
		}
	}))
	sys.Send(spinner, "spin")
	eventually(t, 5*time.Second, "the spinner spinning", spinning.Load)
	other := mustSpawn(t, sys, doubler())
	for i := 0; i < 10; i++ {
		if v, err := actor.Call[int](sys, other, i, 10*time.Second); err != nil || v != 2*i {
			t.Fatal(v, err)
		}
	}
	// Every call was answered while the handler still spun (it spins until
	// stop, up to 30 s): the others did not wait behind it.
	stop.Store(true)
	<-spun
	if st := sys.Stats(); st.Schedulers[0].Retakes == 0 {
		t.Fatalf("no watchdog retake recorded: %+v", st.Schedulers[0])
	}
}

// Kill of a busy actor takes effect at once for the rest of the system; the
// orphaned handler's sends are dropped and counted.
func TestKillBusyActor(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	inside := make(chan struct{})
	finish := make(chan struct{})
	sink := make(chan any, 4)
	target := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if p, ok := m.(actor.Pid); ok {
			close(inside)
			<-finish // busy, outside the runtime
			c.Send(p, "from the dead")
		}
	}))
	watcher := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case string:
			c.Monitor(target)
		default:
			sink <- v
		}
	}))
	sys.Send(watcher, "watch")
	eventually(t, 5*time.Second, "monitor set", func() bool { i, _ := sys.Info(target); return i.Monitors == 1 })
	sys.Send(target, watcher)
	recv(t, inside)
	sys.Exit(target, actor.Kill)
	d, ok := recv(t, sink).(actor.Down)
	if !ok || d.Reason != actor.Killed {
		t.Fatalf("want Down killed while the handler runs, got %#v", d)
	}
	if sys.Alive(target) {
		t.Fatal("killed actor still alive")
	}
	close(finish)
	eventually(t, 5*time.Second, "orphan send counted", func() bool { return sys.Stats().Orphaned == 1 })
	select {
	case m := <-sink:
		t.Fatalf("the orphaned handler's send was delivered: %v", m)
	case <-time.After(20 * time.Millisecond):
	}
}

// Epoch matching under random interleavings: a sequence of waits (sleeps,
// receives with timeouts) interleaved with noise messages and early
// wake-ups must never end a wait early through an earlier wait's stale
// registration, and never lose a wake (each wait ends within a bound).
func TestEpochMatching(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	rapid.Check(t, func(rt *rapid.T) {
		type step struct {
			sleep bool
			d     time.Duration
			early bool // a matching message arrives before the timeout
		}
		steps := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) step {
			return step{
				sleep: rapid.Bool().Draw(rt, "sleep"),
				d:     time.Duration(rapid.IntRange(1, 8).Draw(rt, "ms")) * time.Millisecond,
				early: rapid.Bool().Draw(rt, "early"),
			}
		}), 1, 12).Draw(rt, "steps")
		type outcome struct {
			i       int
			elapsed time.Duration
			v       any
			err     error
		}
		out := make(chan outcome, len(steps))
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			if m != "run" {
				return
			}
			for i, s := range steps {
				begin := time.Now()
				if s.sleep {
					err := c.Sleep(s.d)
					out <- outcome{i, time.Since(begin), nil, err}
					continue
				}
				want := i
				v, err := c.Receive(func(m any) bool { return m == want }, s.d)
				out <- outcome{i, time.Since(begin), v, err}
			}
			c.Stop(actor.Normal)
		}))
		sys.Send(pid, "run")
		for i, s := range steps {
			if !s.sleep && s.early {
				sys.Send(pid, i)
			}
			sys.Send(pid, "noise")
			o := recv(t, out)
			if o.i != i {
				rt.Fatalf("step %d: got outcome of %d", i, o.i)
			}
			switch {
			case s.sleep && o.elapsed < s.d:
				rt.Fatalf("step %d: Sleep(%v) ended after %v: woken by a stale registration", i, s.d, o.elapsed)
			case !s.sleep && o.err == nil && o.v != i:
				rt.Fatalf("step %d: received %v", i, o.v)
			case !s.sleep && o.err != nil && o.elapsed < s.d:
				rt.Fatalf("step %d: timed out after %v < %v: a stale timer", i, o.elapsed, s.d)
			}
		}
	})
}

// A handler killed while it ran (here, inside a plain Go sleep) that then
// waits — Receive without a timeout, Sleep, Call — unwinds at once instead
// of parking forever: the kill's wake must not be lost to the new wait.
func TestKilledHandlerThenWaits(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait func(c *actor.Context, other actor.Pid)
	}{
		{"Receive", func(c *actor.Context, _ actor.Pid) { c.Receive(func(any) bool { return false }, actor.Infinity) }},
		{"Sleep", func(c *actor.Context, _ actor.Pid) { c.Sleep(time.Hour) }},
		{"Call", func(c *actor.Context, other actor.Pid) { c.Call(other, "never answered", actor.Infinity) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := start(t, actor.Config{Schedulers: 2})
			mute := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {})) // takes calls, never replies
			killed := make(chan struct{})
			returned := make(chan struct{})
			running := make(chan struct{})
			pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
				defer close(returned)
				close(running)
				<-killed // running when the kill lands
				tc.wait(c, mute)
			}))
			sys.Send(pid, "go")
			<-running
			if err := sys.Exit(pid, actor.Kill); err != nil {
				t.Fatal(err)
			}
			close(killed)
			select {
			case <-returned:
			case <-time.After(5 * time.Second):
				t.Fatal("the killed handler is still waiting")
			}
			sys.Exit(mute, actor.Kill)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := sys.Wait(ctx); err != nil {
				t.Fatalf("the System never went idle: %v", err)
			}
		})
	}
}

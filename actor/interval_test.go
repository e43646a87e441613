package actor_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/colonyrt/colony/actor"
)

// An interval delivers its message every d, the n-th exactly n*d after the
// call (to the wheel's tick), until cancelled; ReadTimer shows the time to
// the next expiry; a second cancel is false.
func TestSendIntervalTicksUntilCancelled(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		pid, got := recorder(t, sys, begin)
		const d = 10 * time.Millisecond
		ref, err := sys.SendInterval(pid, "tick", d)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 5; n++ {
			onTime(t, <-got, "tick", time.Duration(n)*d)
		}
		time.Sleep(d / 2)
		if left, ok := sys.ReadTimer(ref); !ok || left <= 0 || left > d/2 {
			t.Fatalf("ReadTimer half way to the 6th tick: %v, %v; want (0, %v]", left, ok, d/2)
		}
		if !sys.CancelTimer(ref) {
			t.Fatal("CancelTimer of a running interval: false")
		}
		if sys.CancelTimer(ref) {
			t.Fatal("a second CancelTimer: true")
		}
		if _, ok := sys.ReadTimer(ref); ok {
			t.Fatal("ReadTimer of a cancelled interval: pending")
		}
		time.Sleep(5 * d)
		quiet(t, got, "after CancelTimer")
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("%d timers pending after the cancel", n)
		}
	})
}

// Expiries do not drift: a handler that takes longer than the interval
// does not push the later ones back (they are due at n*d from the call,
// and the late ones come as soon as the handler is free).
func TestSendIntervalDoesNotDrift(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan time.Duration, 64)
		const d = 10 * time.Millisecond
		handled := 0
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			got <- time.Since(begin)
			if handled++; handled == 1 {
				c.Sleep(35 * time.Millisecond) // the first handling overruns three intervals
			}
		}))
		ref, err := sys.SendInterval(pid, "tick", d)
		if err != nil {
			t.Fatal(err)
		}
		var at []time.Duration
		for range 8 {
			at = append(at, <-got)
		}
		sys.CancelTimer(ref)
		if at[7] < 8*d || at[7] >= 8*d+actor.WheelTick {
			t.Fatalf("8th tick at %v, want [%v, %v): the interval drifted (all: %v)", at[7], 8*d, 8*d+actor.WheelTick, at)
		}
	})
}

// The destination's death ends the interval, as it cancels SendAfter
// timers: nothing stays pending, and Wait returns at once, though the
// interval is an hour.
func TestSendIntervalEndsWithDestination(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		got := make(chan any, 16)
		doomed := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			if m == "die" {
				c.Stop(actor.Normal)
				return
			}
			got <- m
		}))
		fast, err := sys.SendInterval(doomed, "fast", time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := sys.SendInterval(doomed, "slow", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if m := <-got; m != "fast" {
				t.Fatalf("got %v, want fast", m)
			}
		}
		sys.Send(doomed, "die")
		synctest.Wait()
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("%d timers pending after the destination's exit", n)
		}
		for _, ref := range []actor.TimerRef{fast, slow} {
			if _, ok := sys.ReadTimer(ref); ok {
				t.Fatal("an interval to a dead actor is still pending")
			}
			if sys.CancelTimer(ref) {
				t.Fatal("CancelTimer of an interval whose destination died: true")
			}
		}
	})
}

// Bad input: a zero or negative interval, a malformed pid; a dead pid is
// the zero TimerRef with no error, as SendAfter.
func TestSendIntervalBadInput(t *testing.T) {
	sys := start(t, actor.Config{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := sys.SendInterval(pid, "x", d); !errors.Is(err, actor.ErrBadInterval) {
			t.Fatalf("SendInterval(%v): %v, want ErrBadInterval", d, err)
		}
	}
	if _, err := sys.SendInterval(actor.Pid{}, "x", time.Second); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("SendInterval to the zero pid: %v, want ErrBadPid", err)
	}
	dead := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
	sys.Send(dead, "stop")
	eventually(t, 5*time.Second, "the actor dead", func() bool { return !sys.Alive(dead) })
	ref, err := sys.SendInterval(dead, "x", time.Second)
	if err != nil || ref != (actor.TimerRef{}) {
		t.Fatalf("SendInterval to a dead pid: %v, %v; want the zero TimerRef, nil", ref, err)
	}
	if n := sys.Stats().Timers; n != 0 {
		t.Fatalf("%d timers pending", n)
	}
}

// From a handler, to itself: the usual way to run periodic work.
func TestContextSendIntervalToSelf(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan time.Duration, 16)
		var ref actor.TimerRef
		ticks := 0
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m {
			case "start":
				var err error
				if ref, err = c.SendInterval(c.Self(), "tick", 20*time.Millisecond); err != nil {
					t.Error(err)
				}
			case "tick":
				got <- time.Since(begin)
				if ticks++; ticks == 3 {
					c.CancelTimer(ref)
				}
			}
		}))
		sys.Send(pid, "start")
		for n := 1; n <= 3; n++ {
			at := <-got
			if want := time.Duration(n) * 20 * time.Millisecond; at < want || at >= want+actor.WheelTick {
				t.Fatalf("tick %d at %v, want [%v, %v)", n, at, want, want+actor.WheelTick)
			}
		}
		time.Sleep(time.Second)
		quiet(t, got, "after the handler cancelled its interval")
	})
}

// An interval of Infinity (or any d past the clock's range) never fires, as
// SendAfter's saturating deadline never does: now+d overflowed to a deadline
// in the past, so it fired at once, and every re-arm was in the past too (a
// message at every poll).
func TestSendIntervalInfinityNeverFires(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	var n atomic.Int64
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { n.Add(1) }))
	for _, d := range []time.Duration{actor.Infinity, actor.Infinity - 1} {
		ref, err := sys.SendInterval(pid, "tick", d)
		if err != nil {
			t.Fatal(err)
		}
		if left, ok := sys.ReadTimer(ref); !ok || left < 100*365*24*time.Hour {
			t.Fatalf("ReadTimer of SendInterval(%v): %v, %v; want pending, centuries", d, left, ok)
		}
		time.Sleep(5 * time.Millisecond)
		if !sys.CancelTimer(ref) {
			t.Fatalf("CancelTimer of SendInterval(%v): false", d)
		}
	}
	time.Sleep(5 * time.Millisecond) // time for a wrong expiry to deliver (it must not)
	if got := n.Load(); got != 0 {
		t.Fatalf("%d messages from intervals that never expire", got)
	}
}

// A period so long that next+period passes the clock's range: the re-arm
// after the first expiry must saturate (never fire again), not wrap into
// the past (a message at every poll).
func TestSendIntervalRearmSaturates(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		got := make(chan any, 1)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			select {
			case got <- m:
			default:
			}
		}))
		const d = 1<<62 + 1<<61
		ref, err := sys.SendInterval(pid, "tick", d)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		<-got
		select {
		case m := <-got:
			sys.CancelTimer(ref) // stops the flood
			t.Fatalf("a second %v at once after the first expiry", m)
		case <-time.After(time.Hour):
		}
		if !sys.CancelTimer(ref) {
			t.Fatal("CancelTimer after the first expiry: false")
		}
	})
}

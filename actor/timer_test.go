package actor_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Timer semantics are tested in a testing/synctest bubble: a System started
// inside one parks its schedulers on channels and Go timers made in the
// bubble, so when every actor is idle the fake clock jumps straight to the
// timekeeper's deadline. Times are therefore exact: a timer fires at its
// deadline rounded up to the wheel's tick (actor.WheelTick), never before
// and never later. No test here sleeps on the real clock except the last
// one, which is about the real clock.

// bubble runs f in a synctest bubble with a System started inside it. The
// watchdog is off unless cfg asks for it: its ticker would make every jump of
// the fake clock crawl forward in WatchdogThreshold/2 steps.
func bubble(t *testing.T, cfg actor.Config, f func(t *testing.T, sys *actor.System)) {
	t.Helper()
	if cfg.WatchdogThreshold == 0 {
		cfg.WatchdogThreshold = -1
	}
	synctest.Test(t, func(t *testing.T) {
		f(t, start(t, cfg))
	})
}

// hit is a message as a handler saw it, stamped with the bubble's clock.
type hit struct {
	m  any
	at time.Duration // since the test's begin
}

// recorder spawns an actor that reports every message it handles on the
// returned channel, stamped with the time since begin.
func recorder(t *testing.T, sys *actor.System, begin time.Time) (actor.Pid, chan hit) {
	got := make(chan hit, 64)
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		got <- hit{m, time.Since(begin)}
	}))
	return pid, got
}

// onTime fails unless h is msg, seen no earlier than want and less than one
// wheel tick after it.
func onTime(t *testing.T, h hit, msg any, want time.Duration) {
	t.Helper()
	if h.m != msg {
		t.Fatalf("got %v at %v, want %v", h.m, h.at, msg)
	}
	if h.at < want || h.at >= want+actor.WheelTick {
		t.Fatalf("%v arrived at %v, want [%v, %v)", msg, h.at, want, want+actor.WheelTick)
	}
}

// quiet fails if anything is waiting on got once the bubble has settled.
func quiet[T any](t *testing.T, got <-chan T, what string) {
	t.Helper()
	synctest.Wait()
	select {
	case v := <-got:
		t.Fatalf("%s: got %v", what, v)
	default:
	}
}

func TestSendAfterFiresAtItsDeadline(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		pid, got := recorder(t, sys, begin)
		// Armed out of order; they fire in deadline order, each on time.
		for _, d := range []time.Duration{30, 5, 20} {
			if _, err := sys.SendAfter(pid, d, d*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5*time.Millisecond - 1)
		quiet(t, got, "a 5ms timer before 5ms")
		onTime(t, recv(t, got), time.Duration(5), 5*time.Millisecond)
		onTime(t, recv(t, got), time.Duration(20), 20*time.Millisecond)
		time.Sleep(30*time.Millisecond - time.Since(begin) - 1)
		quiet(t, got, "a 30ms timer before 30ms")
		onTime(t, recv(t, got), time.Duration(30), 30*time.Millisecond)
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("%d timers pending after all fired", n)
		}
	})
}

func TestCancelTimer(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		pid, got := recorder(t, sys, begin)
		// Pending: true once, then a clean false; nothing is delivered.
		ref, _ := sys.SendAfter(pid, "cancelled", time.Hour)
		if !sys.CancelTimer(ref) {
			t.Fatal("cancel of a pending timer must report true")
		}
		if sys.CancelTimer(ref) {
			t.Fatal("a second cancel must report false")
		}
		if _, ok := sys.ReadTimer(ref); ok {
			t.Fatal("ReadTimer of a cancelled timer")
		}
		// Fired: false.
		fired, _ := sys.SendAfter(pid, "fired", 10*time.Millisecond)
		onTime(t, recv(t, got), "fired", 10*time.Millisecond)
		if sys.CancelTimer(fired) {
			t.Fatal("cancel of a fired timer must report false")
		}
		if _, ok := sys.ReadTimer(fired); ok {
			t.Fatal("ReadTimer of a fired timer")
		}
		// The zero TimerRef names no timer.
		if sys.CancelTimer(actor.TimerRef{}) {
			t.Fatal("cancel of the zero TimerRef")
		}
		if _, ok := sys.ReadTimer(actor.TimerRef{}); ok {
			t.Fatal("ReadTimer of the zero TimerRef")
		}
		time.Sleep(2 * time.Hour)
		quiet(t, got, "after the cancelled timer's deadline")
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("%d timers pending", n)
		}
	})
}

func TestReadTimer(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		pid, got := recorder(t, sys, time.Now())
		ref, _ := sys.SendAfter(pid, "x", 100*time.Millisecond)
		// The time left to the deadline asked for, to within a wheel tick
		// below and never above: read at once, no more than the delay, as
		// erlang:read_timer (it was up to a tick more).
		left := func(want time.Duration) {
			t.Helper()
			l, ok := sys.ReadTimer(ref)
			if !ok || l > want || l <= want-actor.WheelTick && l != 0 {
				t.Fatalf("ReadTimer = %v, %v; want (%v, %v]", l, ok, want-actor.WheelTick, want)
			}
		}
		left(100 * time.Millisecond)
		time.Sleep(40 * time.Millisecond)
		left(60 * time.Millisecond)
		time.Sleep(60*time.Millisecond - 1)
		left(1)
		recv(t, got)
		if _, ok := sys.ReadTimer(ref); ok {
			t.Fatal("ReadTimer of a fired timer")
		}
	})
}

// A zero duration fires at once, as Erlang's send_after with 0, overdue
// timers in the order they were armed; a negative one is refused with
// ErrNegativeTimeout (send_after's badarg) and sends nothing.
func TestSendAfterNowOrNegative(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		time.Sleep(1234567 * time.Nanosecond) // off any tick boundary
		begin := time.Now()
		pid, got := recorder(t, sys, begin)
		for _, d := range []time.Duration{-1, -time.Second, time.Duration(math.MinInt64)} {
			if ref, err := sys.SendAfter(pid, "negative", d); !errors.Is(err, actor.ErrNegativeTimeout) || ref != (actor.TimerRef{}) {
				t.Fatalf("SendAfter(%v) = %v, %v; want ErrNegativeTimeout", d, ref, err)
			}
		}
		sys.SendAfter(pid, "first", 0)
		sys.SendAfter(pid, "second", 0)
		for _, want := range []string{"first", "second"} {
			h := recv(t, got)
			if h.m != want || h.at != 0 {
				t.Fatalf("got %v at %v, want %v at once", h.m, h.at, want)
			}
		}
		time.Sleep(time.Second)
		quiet(t, got, "a refused negative timer")
	})
}

// Durations far beyond any single level of the wheel, up to the largest
// time.Duration, are kept exactly; the wheel's levels cover the whole clock.
func TestSendAfterHugeDuration(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		pid, got := recorder(t, sys, begin)
		forever, _ := sys.SendAfter(pid, "never", time.Duration(math.MaxInt64))
		if left, ok := sys.ReadTimer(forever); !ok || left < 290*365*24*time.Hour {
			t.Fatalf("ReadTimer of a MaxInt64 timer = %v, %v", left, ok)
		}
		const far = 300 * 24 * time.Hour
		sys.SendAfter(pid, "far", far)
		time.Sleep(far - 1)
		quiet(t, got, "a 300-day timer before its time")
		onTime(t, recv(t, got), "far", far)
		if !sys.CancelTimer(forever) {
			t.Fatal("cancel of the MaxInt64 timer")
		}
	})
}

// A delay so long that its deadline saturates the wheel's clock (within a
// tick of the largest time.Duration from the clock's start) still reads no
// more than the delay left: the saturated tick is the one such deadlines
// round up to, so its earliest deadline is that tick's, not the clock's
// last nanosecond (else ReadTimer reads a tick more than the delay,
// against the bound TestReadTimer pins for ordinary delays).
func TestReadTimerSaturatedDelay(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now() // the runtime clock's start: no time passes in the bubble until we sleep
		pid, _ := recorder(t, sys, begin)
		time.Sleep(actor.WheelTick)
		d := time.Duration(math.MaxInt64) - time.Since(begin) - actor.WheelTick + 1
		ref, err := sys.SendAfter(pid, "far", d)
		if err != nil {
			t.Fatal(err)
		}
		if left, ok := sys.ReadTimer(ref); !ok || left > d || left <= d-2*actor.WheelTick {
			t.Fatalf("ReadTimer = %v, %v; want (%v, %v]", left, ok, d-2*actor.WheelTick, d)
		}
		sys.CancelTimer(ref)
	})
}

// OTP: "If Dest is a pid(), the timer is automatically canceled if the
// process referred to by the pid() is not alive, or if the process exits."
// The process that started the timer is no part of it: its exit cancels
// nothing.
func TestTimerOwnership(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		// The destination dies: the timer is cancelled with it.
		doomed := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
		ref, _ := sys.SendAfter(doomed, "x", time.Hour)
		sys.Send(doomed, "die")
		synctest.Wait()
		if sys.Alive(doomed) {
			t.Fatal("the destination is still alive")
		}
		if _, ok := sys.ReadTimer(ref); ok {
			t.Fatal("a timer to a dead actor is still pending")
		}
		if sys.CancelTimer(ref) {
			t.Fatal("cancel of a timer cancelled by its destination's exit")
		}
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("%d timers pending", n)
		}
		// A dead destination: the timer is cancelled at once (the zero
		// TimerRef, no error), and the message counts as dropped.
		dropped := sys.Stats().Dropped
		ref, err := sys.SendAfter(doomed, "x", time.Millisecond)
		if err != nil || ref != (actor.TimerRef{}) {
			t.Fatalf("SendAfter to a dead pid: %v, %v", ref, err)
		}
		if sys.Stats().Dropped != dropped+1 || sys.Stats().Timers != 0 {
			t.Fatal("SendAfter to a dead pid left a timer or dropped nothing")
		}
		// The starter dies: the timer still fires.
		pid, got := recorder(t, sys, begin)
		starter := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			if _, err := c.SendAfter(pid, "from the dead", 10*time.Millisecond); err != nil {
				t.Error(err)
			}
			c.Stop(actor.Normal)
		}))
		sys.Send(starter, "go")
		synctest.Wait()
		if sys.Alive(starter) {
			t.Fatal("the starter is still alive")
		}
		onTime(t, recv(t, got), "from the dead", 10*time.Millisecond)
	})
}

// SetReceiveTimeout: one ReceiveTimeout per quiet spell of d; any other
// message restarts the spell; 0 turns it off.
func TestReceiveTimeout(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan hit, 8)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m {
			case "arm":
				if err := c.SetReceiveTimeout(-1); !errors.Is(err, actor.ErrNegativeTimeout) {
					t.Errorf("negative receive timeout: %v", err)
				}
				c.SetReceiveTimeout(20 * time.Millisecond)
			case "off":
				c.SetReceiveTimeout(0)
			}
			if _, ok := m.(actor.ReceiveTimeout); ok {
				m = "timeout"
			}
			got <- hit{m, time.Since(begin)}
		}))
		sys.Send(pid, "arm")
		recv(t, got)
		onTime(t, recv(t, got), "timeout", 20*time.Millisecond)
		time.Sleep(time.Second) // one per quiet spell: no second timeout
		quiet(t, got, "a second timeout in one quiet spell")
		// A message restarts the spell.
		at := time.Since(begin)
		sys.Send(pid, "poke")
		recv(t, got)
		time.Sleep(15 * time.Millisecond)
		sys.Send(pid, "poke")
		recv(t, got)
		onTime(t, recv(t, got), "timeout", at+35*time.Millisecond)
		// Off.
		sys.Send(pid, "off")
		recv(t, got)
		time.Sleep(time.Second)
		quiet(t, got, "a timeout after SetReceiveTimeout(0)")
	})
}

// Context.Sleep suspends the handler for exactly d while other actors run.
func TestContextSleep(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		other, got := recorder(t, sys, begin)
		sleeper := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			if err := c.Sleep(-1); !errors.Is(err, actor.ErrNegativeTimeout) {
				t.Errorf("Sleep(-1): %v", err)
			}
			if err := c.Sleep(0); err != nil {
				t.Errorf("Sleep(0): %v", err)
			}
			c.Send(other, "sleeping")
			c.Sleep(50 * time.Millisecond)
			c.Send(other, "awake")
		}))
		sys.Send(sleeper, "go")
		onTime(t, recv(t, got), "sleeping", 0)
		sys.Send(other, "meanwhile") // the one scheduler is not held by the sleeper
		onTime(t, recv(t, got), "meanwhile", 0)
		onTime(t, recv(t, got), "awake", 50*time.Millisecond)
	})
}

// The timeout of a selective receive and of a call: ErrTimeout at the
// deadline; a message in time cancels the timer.
func TestWaitTimeouts(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		mute := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {})) // never replies
		got := make(chan hit, 8)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m {
			case "receive":
				_, err := c.Receive(func(m any) bool { return m == "b" }, 30*time.Millisecond)
				got <- hit{err, time.Since(begin)}
				v, err := c.Receive(func(m any) bool { return m == "b" }, time.Hour)
				got <- hit{fmt.Sprintf("%v %v", v, err), time.Since(begin)}
			case "call":
				_, err := c.Call(mute, "hello?", 25*time.Millisecond)
				if te := (*actor.CallTimeoutError)(nil); errors.As(err, &te) && te.Pid == mute {
					err = actor.ErrTimeout // the call's own timeout, named
				}
				got <- hit{err, time.Since(begin)}
			}
		}))
		sys.Send(pid, "receive")
		onTime(t, recv(t, got), actor.ErrTimeout, 30*time.Millisecond)
		time.Sleep(10 * time.Millisecond)
		at := time.Since(begin)
		sys.Send(pid, "b")
		onTime(t, recv(t, got), "b <nil>", at)
		synctest.Wait()
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("a receive that got its message left %d timers", n)
		}
		at = time.Since(begin)
		sys.Send(pid, "call")
		onTime(t, recv(t, got), actor.ErrTimeout, at+25*time.Millisecond)
	})
}

// The timeout of a wait is a (pid, epoch) wake: one for an earlier wait of
// the same actor, or for a dead actor, does nothing at all — whether the
// actor waits for messages (a selective receive: parked) or not (a sleep:
// blocked).
func TestStaleWaitTimeoutIsNoop(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		got := make(chan any, 4)
		receiver := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			v, err := c.Receive(func(m any) bool { return m == "wanted" }, actor.Infinity)
			got <- fmt.Sprintf("%v %v", v, err)
		}))
		sleeper := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			c.Sleep(time.Hour)
			got <- "slept"
		}))
		dead := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
		for _, pid := range []actor.Pid{receiver, sleeper, dead} {
			sys.Send(pid, "go")
		}
		synctest.Wait()
		waiting := map[actor.Pid]string{receiver: "parked", sleeper: "blocked"}
		epochs := map[actor.Pid]uint32{}
		for pid, want := range waiting {
			if st := sys.SlotState(pid); st != want {
				t.Fatalf("%v is %s, want %s", pid, st, want)
			}
			epochs[pid] = sys.WaitEpoch(pid)
		}
		resumes := func() (n uint64) {
			for _, s := range sys.Stats().Schedulers {
				n += s.Resumes
			}
			return n
		}
		before := resumes()
		var fired []interface{ Load() bool }
		for pid, e := range epochs {
			fired = append(fired, sys.ArmWaitTimeout(pid, e-1, 5*time.Millisecond))
		}
		fired = append(fired, sys.ArmWaitTimeout(dead, epochs[receiver], 5*time.Millisecond))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		for i, f := range fired {
			if !f.Load() {
				t.Fatalf("timer %d did not fire", i)
			}
		}
		for pid, want := range waiting {
			if st := sys.SlotState(pid); st != want || sys.WaitEpoch(pid) != epochs[pid] {
				t.Fatalf("a stale wake disturbed %v's wait: now %s", pid, st)
			}
		}
		if n := resumes() - before; n != 0 {
			t.Fatalf("stale wakes resumed %d waits", n)
		}
		quiet(t, got, "the waits")
		sys.Send(receiver, "wanted")
		if v := recv(t, got); v != "wanted <nil>" {
			t.Fatalf("got %v", v)
		}
		time.Sleep(time.Hour)
		if v := recv(t, got); v != "slept" {
			t.Fatalf("got %v", v)
		}
	})
}

// With every scheduler idle, one timer expiry wakes exactly one scheduler
// (the timekeeper), which then runs the actor itself. This is about the real
// clock and real parking, so it runs outside a bubble; it waits for the
// idle mask rather than sleeping, and reads the counters only once every
// role is idle again, so that an activation still finishing is not missed.
func TestTimekeeperWakesOne(t *testing.T) {
	const n = 4
	sys := start(t, actor.Config{Schedulers: n})
	got := make(chan any, 1)
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { got <- m }))
	allIdle := func() bool { return sys.IdleRoles() == n }
	// Under CI load a role can be so late to run that the expiry is already
	// due when it gets to park, and it fires as a busy role rather than as
	// timekeeper; a herd would show up in every attempt, so take the best of
	// three.
	var msg string
	for attempt := 0; attempt < 3; attempt++ {
		eventually(t, 10*time.Second, "all schedulers idle", allIdle)
		before := sys.Stats()
		sys.SendAfter(pid, "tick", 50*time.Millisecond)
		recv(t, got)
		eventually(t, 10*time.Second, "all schedulers idle again", allIdle)
		after := sys.Stats()
		// The timekeeper may wake more than once (the wheel's next expiry
		// is a lower bound, so it can wake early and re-park), but only one
		// scheduler is ever woken by time, and only one runs.
		var tk, ran int
		for i := range after.Schedulers {
			if after.Schedulers[i].TimekeeperWakes != before.Schedulers[i].TimekeeperWakes {
				tk++
			}
			if after.Schedulers[i].Activations != before.Schedulers[i].Activations {
				ran++
			}
		}
		if tk == 1 && ran == 1 {
			return
		}
		msg = fmt.Sprintf("%d schedulers woke as timekeeper and %d ran, want exactly 1 each", tk, ran)
		t.Logf("attempt %d: %s", attempt, msg)
	}
	t.Fatal(msg)
}

// Several timers to one destination (the first recorded in the actor, the
// rest beside it), one of which has fired: the destination's exit cancels
// every one still pending, and a SendAfter after a fire reuses the space.
func TestTimersToOneDestinationDieWithIt(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 2}, func(t *testing.T, sys *actor.System) {
		got := make(chan any, 16)
		doomed := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			if m == "die" {
				c.Stop(actor.Normal)
				return
			}
			got <- m
		}))
		first, _ := sys.SendAfter(doomed, "soon", time.Millisecond)
		var later []actor.TimerRef
		for i := range 5 {
			ref, err := sys.SendAfter(doomed, i, time.Hour+time.Duration(i)*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			later = append(later, ref)
		}
		if m := <-got; m != "soon" {
			t.Fatalf("got %v first, want soon", m)
		}
		if _, ok := sys.ReadTimer(first); ok {
			t.Fatal("a fired timer is still pending")
		}
		again, _ := sys.SendAfter(doomed, "again", time.Hour) // after a fire
		later = append(later, again)
		if n := sys.Stats().Timers; n != 6 {
			t.Fatalf("%d timers pending, want 6", n)
		}
		sys.Send(doomed, "die")
		synctest.Wait()
		for i, ref := range later {
			if _, ok := sys.ReadTimer(ref); ok {
				t.Fatalf("timer %d to a dead actor is still pending", i)
			}
		}
		if n := sys.Stats().Timers; n != 0 {
			t.Fatalf("%d timers pending after the destination's exit", n)
		}
	})
}

// SendAfter racing its destination's exit (real clock, two schedulers):
// whichever way the race goes, nothing destined to the dead actor stays
// pending (timer.go, "Destination timers": the flag and the exit latch).
func TestSendAfterRacesDestinationExit(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	var refs []actor.TimerRef
	for i := 0; i < 300; i++ {
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
		done := make(chan []actor.TimerRef)
		go func() {
			var rs []actor.TimerRef
			for k := range 3 {
				r, err := sys.SendAfter(pid, k, time.Hour)
				if err != nil {
					t.Error(err)
				}
				rs = append(rs, r)
			}
			done <- rs
		}()
		sys.Send(pid, "die")
		refs = append(refs, <-done...)
	}
	eventually(t, 10*time.Second, "no timer pending to the dead", func() bool { return sys.Stats().Timers == 0 })
	for i, r := range refs {
		if _, ok := sys.ReadTimer(r); ok {
			t.Fatalf("timer %d still pending", i)
		}
	}
}

// After the last pending timer is cancelled, a later SendAfter from outside
// the System must still wake a parked role to fire it. (A cancel that left
// the earliest-deadline mirror at the old deadline made the later timer
// look no earlier than it, and nobody was woken.)
func TestTimerAfterCancelOfTheLastOne(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		pid, got := recorder(t, sys, begin)
		synctest.Wait()
		ref, _ := sys.SendAfter(pid, "cancelled", time.Hour)
		synctest.Wait() // the role parks as timekeeper until the hour
		if !sys.CancelTimer(ref) {
			t.Fatal("cancel of a pending timer")
		}
		sys.Send(pid, "poke") // the timekeeper wakes; nothing is pending, it parks plainly
		recv(t, got)
		synctest.Wait()
		sys.SendAfter(pid, "later", 2*time.Hour)
		select {
		case h := <-got:
			onTime(t, h, "later", 2*time.Hour)
		case <-time.After(3 * time.Hour):
			t.Fatal("the 2h timer never fired: no role was woken for it")
		}
	})
}

// A Down taken while SetReceiveTimeout's idle timer runs restarts the
// quiet spell even when the handler then blocks in a selective receive: no
// timeout of the old spell reaches the handler, and the next one comes a
// full spell after the handler returns. (The saved timeout of the old
// spell is dropped as stale after the receive takes another message; since
// a Down restarts the spell, that timeout is stale from the start.)
func TestReceiveTimeoutAcrossSelectiveReceive(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan hit, 10)
		target := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m := m.(type) {
			case string:
				if m == "init" {
					c.SetReceiveTimeout(20 * time.Millisecond)
					c.Monitor(target)
					return
				}
			case actor.Down:
				v, err := c.Receive(func(m any) bool { return m == "Y" }, time.Second)
				got <- hit{[2]any{v, err}, time.Since(begin)}
				return
			case actor.ReceiveTimeout:
				got <- hit{"timeout", time.Since(begin)}
				return
			}
			got <- hit{m, time.Since(begin)}
		}))
		sys.Send(pid, "init")
		time.Sleep(5 * time.Millisecond)
		sys.Exit(target, actor.Kill) // the Down arrives while the idle timer runs
		time.Sleep(40 * time.Millisecond)
		sys.Send(pid, "Y")
		r := recv(t, got)
		if r.m != [2]any{"Y", nil} {
			t.Fatalf("the receive got %v, want Y", r.m)
		}
		onTime(t, recv(t, got), "timeout", r.at+20*time.Millisecond)
	})
}

// A Down is a message like any other: it restarts SetReceiveTimeout's quiet
// spell, as any message ends a gen_server's timeout (accept restarts the
// spell for every message, Down included).
func TestReceiveTimeoutRestartedByDown(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan hit, 8)
		victim := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			c.Stop(actor.Normal)
		}))
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m.(type) {
			case actor.ReceiveTimeout:
				m = "timeout"
			case actor.Down:
				m = "down"
			default:
				c.Monitor(victim)
				c.SetReceiveTimeout(20 * time.Millisecond)
			}
			got <- hit{m, time.Since(begin)}
		}))
		sys.Send(pid, "arm")
		recv(t, got)
		time.Sleep(15 * time.Millisecond)
		sys.Send(victim, "die") // its Down arrives 15 ms into the spell
		if h := recv(t, got); h.m != "down" {
			t.Fatalf("got %v, want the Down", h.m)
		}
		onTime(t, recv(t, got), "timeout", 35*time.Millisecond)
	})
}

// Timers armed into a coarse slot of the wheel (level 2: 4096 ticks, 268 ms)
// that nothing else makes anyone poll for are still moved ahead in paced
// steps before the slot starts, not all at once under the timer lock when
// it starts (an arm that lowered the timekeeper's deadline only to its own
// let an idle System sleep past the slot's run-up); and they
// fire as they would have. (300 of them: the wheel leaves a slot of fewer
// than 64 to be crossed in one go.)
func TestArmedCoarseSlotIsRefinedAhead(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan hit, 400)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			got <- hit{m, time.Since(begin)}
		}))
		synctest.Wait()
		const slot = 4096 * actor.WheelTick // level-2 slot 3 is [3*slot, 4*slot) from the clock's start
		at := func(i int) time.Duration { return 3*slot + time.Duration(i)*(slot-2*actor.WheelTick)/300 }
		for i := range 300 {
			if _, err := sys.SendAfter(pid, i, at(i)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(3*slot - 20*actor.WheelTick) // past the run-up's end, 64 ticks before the slot
		if r := sys.RefineDue(); r != math.MaxInt64 {
			t.Fatalf("20 ticks before the slot starts, Refine still has work due at tick %d: the slot will be crossed in one go", r)
		}
		for i := range 300 {
			onTime(t, recv(t, got), i, at(i))
		}
	})
}

// Timers armed into a coarse slot behind another one are moved ahead in
// steps too: a single timer in level-2 slot 63 (not reported: a slot of
// fewer than 64 is crossed in one go), then 300 in level-3 slot 1, right
// after it. Refine can start on the level-3 slot once slot 63 is crossed,
// so the timekeeper must wake by then (arms that filled the level-3 slot
// and reported nothing, as a slot was crossed before it, let the
// timekeeper sleep until the lone timer's deadline, a tick before the
// level-3 slot, and cross it all but in one go).
func TestArmedCoarseSlotBehindAnotherIsRefinedAhead(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		begin := time.Now()
		got := make(chan hit, 400)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			got <- hit{m, time.Since(begin)}
		}))
		synctest.Wait()
		const (
			l2 = 4096 * actor.WheelTick // a level-2 slot
			l3 = 64 * l2                // level-3 slot 1 is [l3, l3+l2...) from the clock's start
		)
		lone := l3 - actor.WheelTick
		if _, err := sys.SendAfter(pid, -1, lone); err != nil {
			t.Fatal(err)
		}
		at := func(i int) time.Duration { return l3 + time.Duration(i)*(l2-2*actor.WheelTick)/300 }
		for i := range 300 {
			if _, err := sys.SendAfter(pid, i, at(i)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(l3 - 20*actor.WheelTick)
		if r := sys.RefineDue(); r != math.MaxInt64 {
			t.Fatalf("20 ticks before the level-3 slot starts, Refine still has work due at tick %d: the slot will be crossed in one go", r)
		}
		onTime(t, recv(t, got), -1, lone)
		for i := range 300 {
			onTime(t, recv(t, got), i, at(i))
		}
	})
}

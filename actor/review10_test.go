package actor_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

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

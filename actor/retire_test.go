package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestRetireRacesActivationEnd: the watchdog decides a role is stuck, and
// the activation ends (and the role's worker runs dry and parks) before the
// retirement lands. The retired worker must not go on using its index's
// idle bit and permit alongside the fresh role: two goroutines parked on
// one bit take one wake between them, and the other is never woken (a
// lost scheduler; with one scheduler, a lost System).
//
// The window is microseconds wide on an unloaded machine; widen it with an
// overlay that sleeps in the watchdog between its decision and retake.
func TestRetireRacesActivationEnd(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1, WatchdogThreshold: 2 * time.Millisecond})
	echo := make(chan int, 1)
	e := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if n, ok := m.(int); ok {
			echo <- n
		}
	}))
	hog := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		spinFor(12 * time.Millisecond) // stuck long enough for the watchdog
	}))
	for r := range 5 {
		sys.Send(hog, "spin")
		sys.Send(e, -1) // work waiting behind the hog
		if recv(t, echo) != -1 {
			t.Fatal("echo out of order")
		}
		// The scenario, not a wait: the role goes idle, and a late retake
		// lands meanwhile. On a slow machine the race is only less likely;
		// what follows holds either way.
		time.Sleep(30 * time.Millisecond)
		for i := range 20 {
			sys.Send(e, i)
			select {
			case n := <-echo:
				if n != i {
					t.Fatalf("round %d: echo %d, want %d", r, n, i)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: message %d never ran (a role parked with no idle bit?)", r, i)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

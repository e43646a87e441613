package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A timer armed by a handler that then blocks outside the runtime (a Go
// channel), while every other role is parked with no timer armed, still
// fires: the watchdog counts a due timer as waiting work and hands the
// stuck role on, and the fresh role polls the wheel. It never fired while
// the handler blocked: the parked roles had parked as plain idlers, the
// arming role was the one expected to poll, and the watchdog saw no work.
func TestTimerFiresWhileArmingHandlerBlocksOutside(t *testing.T) {
	for _, n := range []int{1, 2} {
		sys := start(t, actor.Config{Schedulers: n})
		got := make(chan any, 1)
		rcv := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { got <- m }))
		release := make(chan struct{})
		blocker := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			c.SendAfter(rcv, "fired", time.Millisecond)
			<-release
		}))
		sys.Send(blocker, "go")
		select {
		case m := <-got:
			if m != "fired" {
				t.Fatalf("schedulers %d: got %v", n, m)
			}
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatalf("schedulers %d: the timer did not fire while its arming handler was blocked", n)
		}
		close(release)
	}
}

package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestSystemCallTimeout: a call from outside the system times out on the
// timing wheel (with every scheduler idle, so the timekeeper path is the one
// that fires it); the reply that comes after is dropped and counted, and the
// caller's recycled wake-up channel carries no stale wake into the next call.
func TestSystemCallTimeout(t *testing.T) {
	for _, n := range []int{1, 2} {
		sys := start(t, actor.Config{Schedulers: n})
		var held []actor.Request
		server := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m := m.(type) {
			case actor.Request:
				if m.Msg == "echo" {
					c.Reply(m, "echo")
					return
				}
				held = append(held, m) // answer later, too late
			case string: // "release"
				for _, r := range held {
					if c.Reply(r, "late") {
						t.Error("a reply after the timeout was taken")
					}
				}
				held = nil
			}
		}))
		for i := range 20 {
			t0 := time.Now()
			_, err := sys.Call(server, "hold", 20*time.Millisecond)
			el := time.Since(t0)
			if !errors.Is(err, actor.ErrTimeout) {
				t.Fatalf("schedulers %d round %d: %v, want ErrTimeout", n, i, err)
			}
			if el < 20*time.Millisecond || el > 5*time.Second {
				t.Fatalf("schedulers %d round %d: timed out after %v", n, i, el)
			}
			sys.Send(server, "release")
			v, err := sys.Call(server, "echo", 5*time.Second)
			if err != nil || v != "echo" {
				t.Fatalf("schedulers %d round %d: next call got %v, %v", n, i, v, err)
			}
		}
		if got := sys.Stats().LateReplies; got != 20 {
			t.Fatalf("schedulers %d: %d late replies counted, want 20", n, got)
		}
	}
}

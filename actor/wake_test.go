package actor_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestNoLostWakes soaks the wake protocols: the actor park (ParkIdle vs
// WakeMsg) and the role park (idle mask vs enqueue, the timekeeper). Each
// round sends from outside into a chain of actors that hops across
// schedulers and answers on a channel, after an idle gap drawn from back to
// back through microseconds to a sleep, so roles are caught running, about
// to park and parked. A lost wake shows as a round that never answers.
func TestNoLostWakes(t *testing.T) {
	rounds := 3000
	if testing.Short() || raceBuild {
		rounds = 600
	}
	for _, n := range []int{1, 2, 3} {
		sys := start(t, actor.Config{Schedulers: n})
		out := make(chan int, 1)
		const chain = 6
		pids := make([]actor.Pid, chain)
		for i := chain - 1; i >= 0; i-- {
			next := actor.Pid{}
			if i < chain-1 {
				next = pids[i+1]
			}
			pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
				v := m.(int)
				if next == (actor.Pid{}) {
					out <- v
					return
				}
				// Spawn a helper now and then: it queues on the local run
				// queue (a wake through the idle mask), not runnext.
				if v%7 == 0 {
					h, _ := c.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
					c.Send(h, 0)
				}
				c.Send(next, v)
			}))
			if err != nil {
				t.Fatal(err)
			}
			pids[i] = pid
		}
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		for r := range rounds {
			switch rng.IntN(4) {
			case 0: // back to back
			case 1:
				spinFor(time.Duration(rng.IntN(5)) * time.Microsecond)
			case 2:
				spinFor(time.Duration(rng.IntN(60)) * time.Microsecond)
			case 3:
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
			}
			if err := sys.Send(pids[0], r); err != nil {
				t.Fatal(err)
			}
			select {
			case v := <-out:
				if v != r {
					t.Fatalf("schedulers %d round %d: got %d", n, r, v)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("schedulers %d round %d: no answer in 10 s (a lost wake); stats %+v", n, r, sys.Stats())
			}
		}
	}
}

// spinFor busy-waits (a sleep is too coarse to land inside the spin window).
func spinFor(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

package actor_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestUnregisterRacesDeath: an Unregister of a name racing the death of its
// holder must not leave the name bound to the dead pid once the death is
// complete. Once Exit(holder, Kill) has returned, the holder's finaliser has
// run (its links and monitors are signalled): in every order of the two
// operations the name is free, so Whereis must not return the dead holder.
func TestUnregisterRacesDeath(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	const name = "racer"
	deadline := time.Now().Add(2 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		a := mustSpawn(t, sys, idle, actor.Name(name))
		var wg sync.WaitGroup
		var ready sync.WaitGroup
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			if n%2 == 0 {
				runtime.Gosched()
			}
			_ = sys.Unregister(name)
		}()
		ready.Wait()
		sys.Exit(a, actor.Kill)
		if p, ok := sys.Whereis(name); ok && p == a {
			wg.Wait()
			t.Fatalf("iteration %d: after its holder's death, %q is still bound to the dead %v", n, name, p)
		}
		wg.Wait()
		// The name is free now, whichever came first.
		if p, ok := sys.Whereis(name); ok {
			t.Fatalf("iteration %d: %q bound to %v after both", n, name, p)
		}
	}
}

package actor_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestMonitorRacesDeath: Monitor, Link and Register racing the death of an
// actor that has no links, monitors or name yet (so no cold state when it
// dies) still resolve: one Down, one Exit for a trapping linker, no name left
// behind. The finaliser and the first Monitor/Link/Register race to create
// the actor's cold record; a record created after the death was collected
// would never be closed.
func TestMonitorRacesDeath(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	type result struct {
		downs, exits int
		linkErr      error
	}
	res := make(chan result, 1)
	var target actor.Pid
	var mu sync.Mutex
	watcher := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "go" {
			return
		}
		mu.Lock()
		tgt := target
		mu.Unlock()
		ref, _ := c.Monitor(tgt)
		lerr := c.Link(tgt)
		var r result
		r.linkErr = lerr
		// One Down for ref; and if the link was made, or refused with
		// noproc, one Exit.
		for r.downs == 0 || r.exits == 0 {
			m, err := c.Receive(nil, 5*time.Second)
			if err != nil {
				break
			}
			switch v := m.(type) {
			case actor.Down:
				if v.Ref == ref {
					r.downs++
				}
			case actor.Exit:
				r.exits++
			}
		}
		// Anything more would be a duplicate.
		for {
			m, err := c.Receive(nil, 0)
			if err != nil {
				break
			}
			switch m.(type) {
			case actor.Down:
				r.downs++
			case actor.Exit:
				r.exits++
			}
		}
		res <- r
	}), actor.TrapExit())
	// A trapping actor ignores Shutdown's signal: kill it first.
	t.Cleanup(func() { sys.Exit(watcher, actor.Kill) })
	deadline := time.Now().Add(time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		tgt := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
		mu.Lock()
		target = tgt
		mu.Unlock()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n%2 == 0 {
				runtime.Gosched()
			}
			sys.Exit(tgt, actor.Kill)
		}()
		sys.Send(watcher, "go")
		regErr := sys.Register("racer", tgt)
		wg.Wait()
		r := recv(t, res)
		if r.downs != 1 || r.exits != 1 {
			t.Fatalf("iteration %d: %d Downs and %d Exits (link: %v), want 1 and 1", n, r.downs, r.exits, r.linkErr)
		}
		if p, ok := sys.Whereis("racer"); ok {
			t.Fatalf("iteration %d: the name survived its dead owner %v (register: %v)", n, p, regErr)
		}
	}
}

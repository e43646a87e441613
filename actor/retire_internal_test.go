package actor

import (
	"context"
	"testing"
	"time"
)

// A role stays odd through a chain of activations (sched.go, enterAct), so
// the watchdog may retire it while its holder is between two activations,
// in findRunnable. The holder goes on looking for work on the retired role
// until its next settleAct or chainAct, and may move work into the retired
// role's local queue: a batch from the global queue, or half of a live
// role's queue by a steal. Nobody else ever looks there (the retired role
// is out of sys.roles, and the watchdog drained the queue when it retired
// it), so that work waits for the one activation the holder runs on the
// retired role — perhaps a spinning handler's, perhaps one that never ends
// (a retirement can land between two activations of the chained counter,
// so a retired role's holder must look for work).
//
// The test plays the holder of a retired role by hand: the System's real
// roles are held up in handlers, actors are queued (globally, or on a held
// role's local queue), and findRunnable runs on a role the watchdog has
// retired. Whatever it does not return to be run must be where live roles
// look.
func TestRetiredRoleKeepsNoWork(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nsched int
	}{{"global batch", 1}, {"steal", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			sys, err := Start(Config{Schedulers: tc.nsched, WatchdogThreshold: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			gate := make(chan struct{})
			defer func() {
				close(gate)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := sys.Shutdown(ctx); err != nil {
					t.Errorf("Shutdown: %v", err)
				}
			}()
			ran := make(chan Pid, 8)
			spawnRunner := func() Pid {
				pid, err := sys.Spawn(ActorFunc(func(c *Context, m any) { ran <- c.Self() }))
				if err != nil {
					t.Fatal(err)
				}
				return pid
			}
			// Spawn the runners first and let them park, before the roles
			// are held.
			var runners []Pid
			for range 5 {
				runners = append(runners, spawnRunner())
			}
			for _, pid := range runners {
				deadline := time.Now().Add(5 * time.Second)
				for sys.SlotState(pid) != "parked" {
					if time.Now().After(deadline) {
						t.Fatalf("runner %v never parked", pid)
					}
					time.Sleep(time.Millisecond)
				}
			}
			// Hold every real role in a handler, outside the runtime. The
			// last one first queues the runners on its own role.
			for i := range tc.nsched {
				last := i == tc.nsched-1
				held := make(chan struct{})
				hog, err := sys.Spawn(ActorFunc(func(c *Context, m any) {
					if last && tc.nsched > 1 {
						for _, pid := range runners {
							c.Send(pid, "run")
						}
					}
					close(held)
					<-gate
				}))
				if err != nil {
					t.Fatal(err)
				}
				sys.Send(hog, "hold")
				<-held
			}
			if tc.nsched == 1 {
				for _, pid := range runners[:2] {
					sys.Send(pid, "run")
				}
			}
			// A role the watchdog retired between two activations of its
			// chain (retake: the claim, then retired, then the drain).
			old := newSched(sys, 0, &schedStats{}, make(chan struct{}, 1))
			old.act.Store(3 | actRetired)
			old.retired.Store(true)
			w := sys.newWorker()
			w.role = old
			v, ok := old.findRunnable(w)
			if !ok || v == 0 {
				t.Fatalf("findRunnable = %d, %v; want a pid to run", v, ok)
			}
			stranded := old.local.Len()
			// Give back the pid it returned, and anything it stranded, so
			// that the System can run them once the roles are free.
			sys.global.Push(v)
			old.drainToGlobal()
			if stranded != 0 {
				t.Fatalf("%d pid(s) left on the local queue of a retired role, where no live role looks", stranded)
			}
		})
	}
}

package supervisor_test

// Tests from review 11 of the supervisor against OTP 25 (each failed
// before its fix).

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// awaitLive polls Stats().Live until it is want or the deadline passes, and
// returns the last count.
func awaitLive(sys *actor.System, want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		live := sys.Stats().Live
		if live == want || time.Now().After(deadline) {
			return live
		}
		time.Sleep(time.Millisecond)
	}
}

// killsSupOnStop traps exits and, told to stop, kills the supervisor
// registered as "dyn".
type killsSupOnStop struct{ actor.ServerBase }

func (killsSupOnStop) Init(c *actor.Context) error { c.TrapExit(true); return nil }
func (killsSupOnStop) Terminate(c *actor.Context, _ actor.Reason) {
	if sup, ok := c.System().Whereis("dyn"); ok {
		c.Exit(sup, actor.Kill)
	}
}

// TestKilledWhileStoppingDynamicChildrenLeaksNone: a simple_one_for_one
// supervisor killed while it stops its children (here by the first child
// told to stop; in life, by its parent after a finite Shutdown) leaves none
// of them running. OTP 25 keeps each child linked until its DOWN (monitor,
// exit(shutdown), wait, then unlink and flush), so a child is either told
// to stop or killed by the link of its dying supervisor. The supervisor
// unlinked every child first and signalled them after: killed in between,
// it left the children it had unlinked running, with no supervisor, for
// ever.
func TestKilledWhileStoppingDynamicChildrenLeaksNone(t *testing.T) {
	sys := newSys(t)
	dyn, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Name: "dyn",
		Children: []supervisor.ChildSpec{{ID: "w", Start: supervisor.ServerStart(func(...any) actor.Server { return killsSupOnStop{} })}}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for range n {
		if _, err := supervisor.StartChildArgs(sys, dyn); err != nil {
			t.Fatal(err)
		}
	}
	sys.Exit(dyn, actor.Shutdown)
	if live := awaitLive(sys, 0, 5*time.Second); live != 0 {
		t.Fatalf("%d of %d children left running after their supervisor was killed while stopping them", live, n)
	}
}

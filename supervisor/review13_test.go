package supervisor_test

// Tests from review 13 of the supervisor (each failed before its fix).

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// nilExiter traps exits and, told to stop by its supervisor, exits with
// the nil reason instead (a Reason is any value, nil included).
type nilExiter struct{}

func (nilExiter) Receive(c *actor.Context, m any) {
	if _, ok := m.(actor.Exit); ok {
		c.TrapExit(false)
		c.Exit(c.Self(), nil)
	}
}

// TestStopChildExitingWithNilReason: a child that exits with the nil
// reason while it is being stopped is stopped: TerminateChild returns.
// awaitDown returned the Down's reason, nil, and nil also meant "timed
// out": the supervisor took the Down for a timeout, killed the dead child
// and waited, with no timeout, for a second Down that never came, hanging
// for ever (and every call to it with it).
func TestStopChildExitingWithNilReason(t *testing.T) {
	sys := newSys(t)
	start := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(nilExiter{}, actor.TrapExit())
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{
		{ID: "w", Start: start, Restart: supervisor.Temporary, Shutdown: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- supervisor.TerminateChild(sys, sup, "w") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("TerminateChild of a child that exited with the nil reason never returned")
	}
}

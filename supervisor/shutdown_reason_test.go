package supervisor_test

import (
	"strings"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// startDrainer starts a trapping child that, asked to stop, stops with
// {shutdown, drained}.
func startDrainer(c *actor.Context, _ ...any) (actor.Pid, error) {
	return c.SpawnLink(actor.ActorFunc(func(c *actor.Context, m any) {
		if _, ok := m.(actor.Exit); ok {
			c.Stop(actor.ShutdownWith{Reason: "drained"})
		}
	}), actor.TrapExit())
}

// TestShutdownWithIsNoShutdownError: a child that is not permanent and
// stops with {shutdown, _} when asked to stop is not a shutdown error
// (OTP 25's shutdown/2 and wait_dynamic_children accept {shutdown, _} when
// not permanent); a permanent one is.
func TestShutdownWithIsNoShutdownError(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	sup, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{
		{ID: "perm", Restart: supervisor.Permanent, Start: startDrainer},
		{ID: "trans", Restart: supervisor.Transient, Start: startDrainer},
		{ID: "temp", Restart: supervisor.Temporary, Start: startDrainer},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"temp", "trans", "perm"} {
		if err := supervisor.TerminateChild(sys, sup, id); err != nil {
			t.Fatal(err)
		}
	}
	got := sink.Matching("shutdown error")
	if len(got) != 1 || !strings.Contains(got[0], "child perm") || !strings.Contains(got[0], "{shutdown,drained}") {
		t.Fatalf("reports %q, want one shutdown error, for perm", got)
	}
	// The same for simple_one_for_one children stopped with their supervisor.
	dyn, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Children: []supervisor.ChildSpec{
		{ID: "d", Restart: supervisor.Transient, Start: startDrainer},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := supervisor.StartChildArgs(sys, dyn); err != nil {
			t.Fatal(err)
		}
	}
	sys.Exit(dyn, actor.Shutdown)
	waitFor(t, "the supervisor to stop", func() bool { return !sys.Alive(dyn) })
	if got := sink.Matching("shutdown error"); len(got) != 1 {
		t.Fatalf("reports %q, want none for d", got)
	}
}

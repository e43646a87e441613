package supervisor_test

// Tests from review 11 of the supervisor against OTP 25 (each failed
// before its fix).

import (
	"errors"
	"fmt"
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

// TestBadSpecFlagsRejected: an AutoShutdown or a child Type out of range is
// a bad spec, as OTP's {invalid_auto_shutdown, _} and {invalid_child_type,
// _}; both were taken (an unknown AutoShutdown meant never, with significant
// children accepted and then ignored; an unknown Type counted as a worker).
// A bad Restart prints as a value instead of panicking in String.
func TestBadSpecFlagsRejected(t *testing.T) {
	sys := newSys(t)
	start := supervisor.ServerStart(func(...any) actor.Server { return rvIdle{} })
	for name, spec := range map[string]supervisor.Spec{
		"auto_shutdown": {AutoShutdown: supervisor.AutoShutdown(7),
			Children: []supervisor.ChildSpec{{ID: "a", Start: start, Restart: supervisor.Temporary, Significant: true}}},
		"type": {Children: []supervisor.ChildSpec{{ID: "a", Start: start, Type: supervisor.ChildType(5)}}},
	} {
		_, err := supervisor.Start(sys, spec)
		var se *actor.StartError
		if !errors.As(err, &se) {
			t.Errorf("%s: Start = %v, want a StartError", name, err)
			continue
		}
		if _, ok := se.Reason.(supervisor.StartSpecError); !ok {
			t.Errorf("%s: reason %v, want a StartSpecError", name, se.Reason)
		}
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisor.StartChild(sys, sup, supervisor.ChildSpec{ID: "b", Start: start, Type: supervisor.ChildType(-1)})
	if _, ok := err.(supervisor.StartSpecError); !ok {
		t.Errorf("StartChild of a bad Type = %v, want a StartSpecError", err)
	}
	if s := fmt.Sprint(supervisor.Restart(9)); s != "Restart(9)" {
		t.Errorf("Restart(9) prints %q", s)
	}
}

// TestTerminateChildPidMalformedPid: TerminateChildPid of a malformed pid
// (the zero Pid, another System's) is actor.ErrBadPid, as every call that
// takes a pid answers it. It returned nil, the answer for a child that has
// already exited (OTP's terminate_child of a non-pid on a
// simple_one_for_one supervisor is an error too).
func TestTerminateChildPidMalformedPid(t *testing.T) {
	sys, other := newSys(t), newSys(t)
	sup, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supervisor.ServerStart(func(...any) actor.Server { return rvIdle{} })}}})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []actor.Pid{{}, foreign} {
		if err := supervisor.TerminateChildPid(sys, sup, pid); !errors.Is(err, actor.ErrBadPid) {
			t.Errorf("TerminateChildPid(%v) = %v, want ErrBadPid", pid, err)
		}
	}
}

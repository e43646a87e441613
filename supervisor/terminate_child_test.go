package supervisor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// TestTerminateChildPidMalformedPid: TerminateChildPid of a malformed pid
// (the zero Pid, another System's) is actor.ErrBadPid, as every call that
// takes a pid answers it. It returned nil, the answer for a child that has
// already exited (OTP's terminate_child of a non-pid on a
// simple_one_for_one supervisor is an error too).
func TestTerminateChildPidMalformedPid(t *testing.T) {
	sys, other := newSys(t), newSys(t)
	sup, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supervisor.ServerStart(func(...any) actor.Server { return idleServer{} })}}})
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

// TestTerminateChildPidNotAChildIsNotFound: OTP 25 docs: "If the specified process is
// alive, but is not a child of the specified supervisor, the function
// returns {error,not_found}".
func TestTerminateChildPidNotAChildIsNotFound(t *testing.T) {
	sys := newSys(t)
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.SimpleOneForOne,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supervisor.ServerStart(func(...any) actor.Server { return idleServer{} })}},
	})
	if err != nil {
		t.Fatal(err)
	}
	stranger, _ := actor.StartServer(sys, idleServer{})
	if err := supervisor.TerminateChildPid(sys, sup, stranger); !errors.Is(err, supervisor.ErrNotFound) {
		t.Errorf("TerminateChildPid(alive stranger) = %v, want ErrNotFound", err)
	}
}

package supervisor_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// A child's start error is reachable with errors.Is/As through the
// supervisor's start error ({shutdown, {failed_to_start_child, Id, Err}})
// and through StartChild's: a service tells "address in use" from any
// other failure without three type assertions to dig it out.
func TestStartErrorsUnwrapToTheCause(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	listen := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		l, err := net.Listen("tcp", taken.Addr().String())
		if err == nil {
			l.Close()
		}
		return actor.Pid{}, err
	}
	spec := supervisor.Spec{Children: []supervisor.ChildSpec{{ID: "http", Start: listen}}}

	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}})
	_, err = supervisor.Start(sys, spec)
	var op *net.OpError
	if !errors.Is(err, syscall.EADDRINUSE) || !errors.As(err, &op) {
		t.Fatalf("supervisor.Start: %v; want it to unwrap to EADDRINUSE and a *net.OpError", err)
	}

	top, err := supervisor.Start(sys, supervisor.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisor.StartChild(sys, top, supervisor.ChildSpec{ID: "http", Start: listen})
	var cse *supervisor.ChildStartError
	if !errors.As(err, &cse) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("StartChild: %v; want a *ChildStartError that unwraps to EADDRINUSE", err)
	}

	sys2, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := supervisor.RunSystem(ctx, sys2, spec, time.Second); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("RunSystem: %v; want it to unwrap to EADDRINUSE", err)
	}
}

type slowInit struct{ actor.ServerBase }

func (slowInit) Init(c *actor.Context) error {
	c.Sleep(time.Minute) // unwound by the starter's kill
	return nil
}

// A child whose Init timed out (InitTimeout) fails its start with a
// *StartError that errors.Is takes for ErrTimeout, also through
// StartChild's *ChildStartError and supervisor.Start's error, whose reasons
// carry the start's Reason (Atom("timeout")), not the error.
func TestChildInitTimeoutUnwrapsToErrTimeout(t *testing.T) {
	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}})
	start := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return actor.SpawnServer(c, slowInit{}, actor.InitTimeout(10*time.Millisecond))
	}
	top, err := supervisor.Start(sys, supervisor.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisor.StartChild(sys, top, supervisor.ChildSpec{ID: "slow", Start: start})
	var cse *supervisor.ChildStartError
	if !errors.As(err, &cse) || !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("StartChild: %v; want a *ChildStartError that errors.Is takes for ErrTimeout", err)
	}
	_, err = supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{{ID: "slow", Start: start}}})
	if !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("supervisor.Start: %v; want it to unwrap to ErrTimeout", err)
	}
}

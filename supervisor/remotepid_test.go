package supervisor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// A StartFunc may return a remote pid (a child on another node, started by
// dist's Node.RemoteChild): it is the running child, listed and counted as
// active (is_pid). On a System with no distribution to reach it, stopping
// it cannot wait for a Down that no route can bring: the stop ends at once
// with noconnection, a shutdown_error, instead of hanging the supervisor.
func TestRemotePidChildWithoutRoute(t *testing.T) {
	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}})
	remote, err := actor.RemotePid(actor.RemoteID{Node: "nowhere@127.0.0.1", Creation: 7, ID: 1, Serial: 1})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan actor.Reason, 1)
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Children: []supervisor.ChildSpec{{ID: "r", Start: func(*actor.Context, ...any) (actor.Pid, error) { return remote, nil }}},
		Hooks: &supervisor.Hooks{ShutdownError: func(_ actor.Pid, _ string, _ actor.Pid, r actor.Reason) {
			errs <- r
		}},
	})
	if err != nil {
		t.Fatalf("start with a remote child: %v", err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil || len(kids) != 1 || kids[0].Pid != remote {
		t.Fatalf("WhichChildren: %+v, %v; want the remote pid", kids, err)
	}
	if n, err := supervisor.CountChildren(sys, sup); err != nil || n.Active != 1 {
		t.Errorf("CountChildren: %+v, %v; want 1 active", n, err)
	}
	if err := supervisor.TerminateChild(sys, sup, "r"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-errs:
		if r != actor.Reason(actor.NoConnection) {
			t.Errorf("shutdown_error %v, want noconnection", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown_error")
	}
}

package supervisor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// A supervisor reports through the System's Logger what OTP's supervisor
// reports: child_terminated for any exit of a permanent child and an
// abnormal one of any other, start_error for a failed restart, and
// shutdown when the restart intensity is exceeded. It reported nothing.
func TestSupervisorReports(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	logged := func(sub string) int { return len(sink.Matching(sub)) }
	started := 0
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy:  supervisor.OneForOne,
		Intensity: 2, Period: time.Minute,
		Children: []supervisor.ChildSpec{
			{ID: "quiet", Restart: supervisor.Transient, Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })},
			{ID: "perm", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
				if started++; started == 3 {
					return actor.Pid{}, fmt.Errorf("no resources")
				}
				return actor.SpawnServer(c, stopper{})
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	child := func(id string) actor.Pid {
		kids, err := supervisor.WhichChildren(sys, sup)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range kids {
			if ch.ID == id {
				return ch.Pid
			}
		}
		t.Fatalf("no child %s", id)
		return actor.Pid{}
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("no report of %s; logged %q", what, sink.All())
			}
			time.Sleep(time.Millisecond)
		}
	}
	// A transient child that stops normally: no report.
	actor.Cast(sys, child("quiet"), actor.Normal)
	// A permanent child that stops normally is reported (and restarted).
	actor.Cast(sys, child("perm"), actor.Normal)
	wait("the permanent child's exit", func() bool { return logged("child perm") == 1 })
	// It crashes: reported; its restart fails (start 3): start error,
	// retried; the retry's restart is the third in the period: shutdown.
	actor.Cast(sys, child("perm"), actor.Atom("boom"))
	wait("the crash", func() bool { return logged("terminated: boom") == 1 })
	wait("the failed restart", func() bool { return logged("failed to restart: no resources") == 1 })
	wait("the give-up", func() bool { return logged("reached max restart intensity") == 1 })
	// The supervisor has stopped, so it handled the transient child's exit.
	if n := logged("child quiet"); n != 0 {
		t.Fatalf("a transient child's normal exit was reported %d times", n)
	}
}

package colonytest_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
	"github.com/colonyrt/colony/supervisor"
)

// A planted bug of the second kind the issue names: a supervised worker
// and a dispatcher that sends it jobs by name and forgets them. When the
// worker dies with a job in its mailbox, the supervisor restarts it, and
// the job is lost: the dispatcher neither monitors the worker nor resends.
// No ordinary run kills the worker; Crashes does.

type (
	jobReq  struct{ n int }
	work    struct{ n int }
	jobDone struct{ n int }
)

type jobWorker struct{ dispatcher actor.Pid }

func (w *jobWorker) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(work); ok {
		c.Send(w.dispatcher, jobDone(m))
	}
}

type dispatcher struct{ probe actor.Pid }

func (d *dispatcher) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case jobReq:
		if pid, ok := c.System().Whereis("worker"); ok {
			c.Send(pid, work(m)) // the bug: fire and forget
		}
	case jobDone:
		c.Send(d.probe, m)
	}
}

func restartBody(t *rapid.T, sys *actor.System) {
	p, err := colonytest.NewProbe(sys)
	if err != nil {
		t.Fatal(err)
	}
	d := &dispatcher{probe: p.Pid()}
	dp, err := sys.Spawn(d)
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.OneForOne, Intensity: 10, Period: time.Second,
		Children: []supervisor.ChildSpec{{ID: "worker", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
			return c.SpawnLink(&jobWorker{dispatcher: dp}, actor.Name("worker"))
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := rapid.IntRange(1, 4).Draw(t, "jobs")
	for i := 0; i < n; i++ {
		sys.Send(dp, jobReq{i})
	}
	for i := 0; i < n; i++ {
		if _, err := colonytest.Expect(p, time.Second, func(m jobDone) bool { return m.n == i }); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
}

// TestRestartLosesJobFound: Find, killing only the worker, finds the lost
// job; without kills every job is done.
func TestRestartLosesJobFound(t *testing.T) {
	if f := colonytest.Find(t, 50, restartBody); f != nil {
		t.Fatalf("failed with no kill: %s", f.Message)
	}
	found := colonytest.Find(t, 100, restartBody, colonytest.Crashes(1, 4, func(c colonytest.Candidate) bool {
		return c.Type == "*colonytest_test.jobWorker"
	}))
	if found == nil {
		t.Fatal("no lost job in 100 checks")
	}
	t.Log(found)
}

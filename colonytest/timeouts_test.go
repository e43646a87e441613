package colonytest_test

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// A client that retries a job whose call timed out, and a server that is
// not idempotent (the planted bug: a job that timed out may still have
// been done, and is done twice). The server is never slow here, so only a
// fault shows it.

type job struct{ n int }

type jobServer struct{ done int }

func (s *jobServer) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(actor.Request); ok {
		switch q := m.Msg.(type) {
		case job:
			s.done++ // the bug: job q.n again is done again
			c.Reply(m, q.n)
		case string:
			c.Reply(m, s.done)
		}
	}
}

type jobClient struct {
	server actor.Pid
	jobs   int
	sent   int
}

func (k *jobClient) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case kick:
		for i := 0; i < k.jobs; i++ {
			for {
				_, err := c.Call(k.server, job{i}, time.Second)
				if errors.Is(err, actor.ErrTimeout) {
					continue // retry
				}
				if err != nil {
					panic(err)
				}
				break
			}
			k.sent++
		}
	case actor.Request:
		c.Reply(m, k.sent)
	}
}

func jobsBody(t *rapid.T, sys *actor.System) {
	n := rapid.IntRange(1, 5).Draw(t, "jobs")
	sp, err := sys.Spawn(&jobServer{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := sys.Spawn(&jobClient{server: sp, jobs: n})
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(cp, kick{})
	sent, err := actor.Call[int](sys, cp, "sent", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done, err := actor.Call[int](sys, sp, "done", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if done != sent {
		t.Fatalf("the client sent %d jobs, the server did %d", sent, done)
	}
}

// TestCallTimeoutFaultFound: with CallTimeouts, Find sees a job done twice;
// without faults the property holds.
func TestCallTimeoutFaultFound(t *testing.T) {
	if f := colonytest.Find(t, 50, jobsBody); f != nil {
		t.Fatalf("failed without faults: %s", f.Message)
	}
	found := colonytest.Find(t, 100, jobsBody, colonytest.CallTimeouts(1, 3))
	if found == nil {
		t.Fatal("no call timed out in 100 checks")
	}
	t.Log(found)
}

package colonytest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// echo replies to each call with its request and forwards plain messages
// to the pid it was given.
type echo struct{ to actor.Pid }

func (e *echo) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Request:
		c.Reply(m, m.Msg)
	case string:
		c.Send(e.to, m)
	}
}

func TestRunCallsAndProbe(t *testing.T) {
	res := colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		p, err := colonytest.NewProbe(sys)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := sys.Spawn(&echo{to: p.Pid()})
		if err != nil {
			t.Fatal(err)
		}
		v, err := actor.Call[string](sys, pid, "hi", time.Second)
		if err != nil || v != "hi" {
			t.Fatalf("Call = %q, %v", v, err)
		}
		sys.Send(pid, "a")
		sys.Send(pid, "b")
		if err := p.ExpectMsg(time.Second, "b"); err != nil {
			t.Fatal(err)
		}
		if err := p.ExpectMsg(time.Second, "a"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := p.Expect(time.Hour, nil); err == nil {
			t.Fatal("Expect on an empty probe took a message")
		}
		if d := time.Since(start); d < time.Hour || d > time.Hour+time.Millisecond {
			t.Fatalf("a one-hour Expect took %v of virtual time", d)
		}
	})
	if res.Steps == 0 || len(res.Trace) == 0 {
		t.Fatalf("no trace: %+v", res)
	}
	t.Logf("trace:\n%s", strings.Join(res.Trace, "\n"))
}

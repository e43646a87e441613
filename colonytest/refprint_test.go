package colonytest_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// refShow is a server whose messages carry the runtime's values: a timer
// ref, a monitor ref, a Request, and the Down and Timeout they lead to.
type refShow struct {
	actor.ServerBase
	peer actor.Pid
}

type (
	showRefs struct{}
	carried  struct{ V any }
	alarm    struct{}
)

func (s *refShow) HandleInfo(c *actor.Context, msg any) {
	if _, ok := msg.(showRefs); !ok {
		return
	}
	tref, _ := c.StartTimer(c.Self(), alarm{}, time.Second)
	c.Send(c.Self(), carried{tref})
	mref, _ := c.Monitor(s.peer)
	c.Send(c.Self(), carried{mref})
	c.Exit(s.peer, actor.Atom("boom"))
}

func (s *refShow) HandleCall(c *actor.Context, req actor.Request) {
	c.Send(c.Self(), carried{req})
	c.Reply(req, 0)
}

func refShowBody(t *testing.T, sys *actor.System) {
	peer, err := sys.Spawn(&echo{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := actor.StartServer(sys, &refShow{peer: peer})
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, showRefs{})
	if _, err := actor.Call[int](sys, pid, "q", time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // virtual: the timer has fired
}

// TestTraceShowsRefsReadablyAndAlike: the trace prints timer refs, refs,
// Requests and Downs as people read them (#TimerRef<0.n>, #Ref<0.k>,
// "call from ...", a Down with its ref), not as the runtime's structs, and
// the same in two runs of one seed, although a ref's own number and the
// System's node differ between them.
func TestTraceShowsRefsReadablyAndAlike(t *testing.T) {
	res := colonytest.VerifyDeterminism(t, 1, refShowBody)
	trace := strings.Join(res.Trace, "\n")
	if strings.Contains(trace, "{{") || strings.Contains(trace, "<nil>") {
		t.Errorf("the trace prints a runtime value's internals:\n%s", trace)
	}
	// The timer ref carried and the one in the Timeout are the same, as
	// the trace prints them.
	carriedRef := regexp.MustCompile(`colonytest_test.carried \{(#TimerRef<0\.\d+>)\}`).FindStringSubmatch(trace)
	if carriedRef == nil {
		t.Fatalf("no carried timer ref in the trace:\n%s", trace)
	}
	for _, want := range []string{
		"actor.Timeout {" + carriedRef[1] + " {}}",
		"colonytest_test.carried {#Ref<0.1>}",
		"Down{#Ref<0.1> <0.0.1> boom}",
		"colonytest_test.carried {call from outside: q}",
	} {
		if !strings.Contains(trace, want) {
			t.Errorf("no %q in the trace:\n%s", want, trace)
		}
	}
}

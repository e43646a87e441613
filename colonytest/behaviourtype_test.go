package colonytest_test

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
	"github.com/colonyrt/colony/supervisor"
)

// kvServer is a user's Server: the trace and Crashes must name it, not the
// runtime's wrapper that runs it.
type kvServer struct {
	actor.ServerBase
	m map[string]int
}

func (s *kvServer) Init(*actor.Context) error { s.m = map[string]int{}; return nil }

func (s *kvServer) HandleCall(c *actor.Context, req actor.Request) {
	c.Reply(req, s.m[req.Msg.(string)])
}

// typedKV is a user's TypedServer, run through actor.Typed's adapter.
type typedKV struct{ actor.ServerBase }

func (typedKV) HandleCall(c *actor.Context, q string, from actor.ReplyTo[int]) {
	from.Reply(c, len(q))
}

// TestCrashesPicksAServerByTheUsersType: a Crashes match on the user's
// Server type kills that server; every candidate, and every trace line, is
// named by the user's type (a Typed server's by its TypedServer, a
// supervisor's by the supervisor), never by the runtime's wrapper.
func TestCrashesPicksAServerByTheUsersType(t *testing.T) {
	var (
		mu    sync.Mutex
		seen  []string
		armed atomic.Bool // the user's server has started: it may be killed
	)
	match := func(c colonytest.Candidate) bool {
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(seen, c.Type) {
			seen = append(seen, c.Type)
		}
		return c.Type == "*colonytest_test.kvServer" && armed.Load()
	}
	res := colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		typed, err := actor.StartServer(sys, actor.Typed[string, int, any](&typedKV{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := supervisor.Start(sys, supervisor.Spec{}); err != nil {
			t.Fatal(err)
		}
		kv, err := actor.StartServer(sys, &kvServer{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := sys.Monitor(kv)
		if err != nil {
			t.Fatal(err)
		}
		armed.Store(true)
		if n, err := actor.Call[int](sys, typed, "four", time.Second); err != nil || n != 4 {
			t.Fatalf("the typed server answered %d, %v", n, err)
		}
		sys.Send(kv, "x") // its next step: the match's only candidate, killed (rate 1)
		select {
		case <-w.Done():
		case <-time.After(time.Second): // virtual
			t.Fatal("the user's server was not killed")
		}
		if r := w.Reason(); r != actor.Killed {
			t.Fatalf("Down reason %v, want killed", r)
		}
	}, colonytest.Crashes(1, 1, match))
	trace := strings.Join(res.Trace, "\n")
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"*colonytest_test.kvServer", "*colonytest_test.typedKV", "*supervisor.sup"} {
		if !slices.Contains(seen, want) {
			t.Errorf("no candidate of type %s; candidates: %q", want, seen)
		}
	}
	for _, typ := range seen {
		if strings.HasPrefix(typ, "*actor.") || strings.HasPrefix(typ, "actor.") {
			t.Errorf("a candidate is named by the runtime's wrapper %s; candidates: %q", typ, seen)
		}
	}
	if strings.Contains(trace, "actor.serverActor") || strings.Contains(trace, "actor.typed[") {
		t.Errorf("the trace names the runtime's wrapper:\n%s", trace)
	}
	for _, want := range []string{
		" run <0.0.1> *colonytest_test.typedKV: init, then ",
		" *colonytest_test.typedKV: call string four",
		" kill <0.2.1> *colonytest_test.kvServer",
	} {
		if !strings.Contains(trace, want) {
			t.Errorf("no %q in the trace:\n%s", want, trace)
		}
	}
}

package statem_test

import (
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
	"github.com/colonyrt/colony/statem"
)

// toggle is a StateFunctions machine: its type, not the adapter Functions
// makes of it, names it.
type toggle struct{}

func (toggle) Init(*statem.Context[bool]) (bool, error) { return false, nil }

func (toggle) States() map[bool]statem.State[bool] {
	flip := func(to bool) statem.State[bool] {
		return statem.State[bool]{Handle: func(c *statem.Context[bool], ev statem.Event) {
			if ev.Type == statem.Call {
				c.Reply(ev.Req, to)
			}
			c.NextState(to)
		}}
	}
	return map[bool]statem.State[bool]{false: flip(true), true: flip(false)}
}

func (toggle) Terminate(*statem.Context[bool], actor.Reason, bool) {}

// TestMachinesAreNamedByTheUsersType: colonytest's trace and its Crashes
// candidates name a machine by the user's type, in both callback modes,
// never by the Server that runs it.
func TestMachinesAreNamedByTheUsersType(t *testing.T) {
	var types []string
	res := colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		lock, err := statem.Start[string](sys, &codeLock{code: "1", relock: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		tg, err := statem.Start(sys, statem.Functions[bool](toggle{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := actor.Call[lockCount](sys, lock, "count", time.Second); err != nil {
			t.Fatal(err)
		}
		if on, err := actor.Call[bool](sys, tg, "flip", time.Second); err != nil || !on {
			t.Fatalf("toggle answered %v, %v", on, err)
		}
	}, colonytest.Crashes(0, 1, func(c colonytest.Candidate) bool {
		types = append(types, c.Type)
		return false
	}))
	trace := strings.Join(res.Trace, "\n")
	for _, want := range []string{"*statem_test.codeLock", "statem_test.toggle"} {
		if !strings.Contains(trace, want) {
			t.Errorf("the trace does not name %s:\n%s", want, trace)
		}
	}
	for _, typ := range types {
		if strings.HasPrefix(typ, "*statem.") {
			t.Errorf("a Crashes candidate is named %s", typ)
		}
	}
	if strings.Contains(trace, "*statem.") {
		t.Errorf("the trace names the runtime's wrapper:\n%s", trace)
	}
}

//go:build unix

package dist_test

import (
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/statem"
)

// gate is a statem machine for a call from Erlang: closed or open; a cast
// opens or closes it; a call "state" answers the state, "when_closed" is
// postponed while it is open, "hold" is never answered.
type gate struct{}

func (gate) Init(c *statem.Context[actor.Atom]) (actor.Atom, error) { return "closed", nil }

func (gate) HandleEvent(c *statem.Context[actor.Atom], st actor.Atom, ev statem.Event) {
	switch {
	case ev.Type == statem.Cast:
		c.NextState(ev.Msg.(actor.Atom))
	case ev.Type == statem.Call && ev.Msg == actor.Atom("state"):
		c.Reply(ev.Req, st)
	case ev.Type == statem.Call && ev.Msg == actor.Atom("when_closed") && st == "open":
		c.Postpone()
	case ev.Type == statem.Call && ev.Msg == actor.Atom("when_closed"):
		c.Reply(ev.Req, st)
	}
}

func (gate) Terminate(*statem.Context[actor.Atom], actor.Reason, actor.Atom) {}

// gen_statem:call and cast from an Erlang node reach a registered statem
// machine as they reach a Server: replies, a call postponed until a state
// change answers it, a call timeout with no stray reply afterwards, and
// calls with {dirty_timeout, T} (no proxy process on the caller's side).
func TestErlangCallsStatemMachine(t *testing.T) {
	n, e := erlPair(t, dist.Config{})
	if _, err := statem.Start[actor.Atom](n.sys, gate{}, actor.WithSpawn(actor.Name("gate"))); err != nil {
		t.Fatal(err)
	}
	node := atomLit(n.Name())
	got := e.Eval(`G = {gate, ` + node + `},
        R1 = gen_statem:call(G, state),
        ok = gen_statem:cast(G, open),
        R2 = gen_statem:call(G, state),
        Self = self(),
        spawn(fun() -> Self ! {waited, gen_statem:call(G, when_closed)} end),
        R3 = receive {waited, _} -> answered_while_open after 200 -> postponed end,
        ok = gen_statem:cast(G, closed),
        R4 = receive {waited, W} -> W after 5000 -> no_reply end,
        R5 = try gen_statem:call(G, hold, 100) catch exit:{timeout, _} -> timeout end,
        R6 = receive M -> {stray, M} after 200 -> none end,
        R7 = gen_statem:call(G, state, {dirty_timeout, 5000}),
        R8 = try gen_statem:call(G, hold, {dirty_timeout, 100}) catch exit:{timeout, _} -> timeout end,
        [R1, R2, R3, R4, R5, R6, R7, R8].`)
	if want := "[closed,open,postponed,closed,timeout,none,closed,timeout]"; got != want {
		t.Fatalf("Erlang -> statem: %s, want %s", got, want)
	}
}

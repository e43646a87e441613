//go:build unix

package dist_test

import (
	"errors"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// Erlang's spawn/4, spawn_link/4, spawn_monitor/4 and spawn_request/5 (with
// monitor, as erpc asks) of a registered Go behaviour behave as they do of
// an Erlang function on an Erlang node: the same scenario against both.
// So do they of a function that does not exist: a pid, whose process dies
// of {undef, [{M, F, Args, []}]}, the reason its link and monitor see.
func TestErlangSpawnsOnColony(t *testing.T) {
	n, e1, e2 := erlPeers(t)
	registerWorker(t, n)
	want := e1.Eval("callpeer:spawn_scenario(" + atomLit(actor.Atom(e2.Name)) + ", callpeer, worker).")
	got := e1.Eval("callpeer:spawn_scenario(" + atomLit(n.Name()) + ", colony, worker).")
	t.Logf("Erlang -> Erlang: %s", want)
	if got != want {
		t.Fatalf("Erlang -> Colony:\n  %s\nwant (Erlang -> Erlang):\n  %s", got, want)
	}
	const expect = `[{hello,1},pong,{exit,bye},{down,bye},{ok,true},none,true,{pid,true},` +
		`{down,{undef,[{m,nosuch_function_here,[me],[]}]}},{exit,{undef,[{m,nosuch_function_here,[me],[]}]}},` +
		`{ok,{undef,[{m,nosuch_function_here,[me],[]}]}},{ok,true},[]]`
	if want != expect {
		t.Errorf("the Erlang reference changed: %s", want)
	}
	// The spawn function named by module:function.
	if err := n.RegisterSpawn("jobs:start", func(args []any) (actor.Actor, error) {
		return &worker{parent: args[0].(actor.Pid)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := e1.Eval("P = spawn(" + atomLit(n.Name()) + ", jobs, start, [self()]), receive {hello, P, 1} -> ok after 5000 -> timeout end."); v != "ok" {
		t.Errorf("spawn of jobs:start: %s", v)
	}
}

// erpc:call and erpc:cast of a Go function registered with RegisterRPC
// give what they give of an Erlang function: a value, undef for a function
// nothing defines, an error, a cast's effect; and so does rpc:call, which
// OTP runs through erpc.
func TestErlangErpcOnColony(t *testing.T) {
	n, e1, e2 := erlPeers(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(n.RegisterRPC("add", func(_ *actor.Context, args []any) (any, error) {
		a, ok1 := args[0].(int)
		b, ok2 := args[1].(int)
		if !ok1 || !ok2 {
			return nil, errors.New("add takes two integers")
		}
		return a + b, nil
	}))
	must(n.RegisterRPC("fails", func(*actor.Context, []any) (any, error) { return nil, errKV }))
	must(n.RegisterRPC("note", func(c *actor.Context, args []any) (any, error) {
		return actor.Atom("ok"), c.Send(args[0].(actor.Pid), actor.Atom("noted"))
	}))
	want := e1.Eval("callpeer:erpc_scenario(" + atomLit(actor.Atom(e2.Name)) + ", callpeer).")
	got := e1.Eval("callpeer:erpc_scenario(" + atomLit(n.Name()) + ", colony).")
	t.Logf("Erlang -> Erlang: %s", want)
	if got != want {
		t.Fatalf("Erlang -> Colony:\n  %s\nwant (Erlang -> Erlang):\n  %s", got, want)
	}
	if expect := `[3,undef,{error,<<"kv: failed on purpose">>},noted,3,5,badrpc_undef]`; want != expect {
		t.Errorf("the Erlang reference changed: %s", want)
	}
}

// SpawnMonitor of an Erlang function that exits at once: the Down carries
// its reason, as spawn_monitor/4 between two Erlang nodes gives it (the
// monitor is made with the process, so it cannot answer noproc).
func TestColonySpawnMonitorsOnErlang(t *testing.T) {
	n, e1, e2 := erlPeers(t)
	want := e1.Eval("begin {_, R} = spawn_monitor(" + atomLit(actor.Atom(e2.Name)) + ", erlang, exit, [boom]), " +
		"receive {'DOWN', R, process, _, Why} -> Why after 10000 -> timeout end end.")
	if want != "boom" {
		t.Fatalf("Erlang -> Erlang: %s, want boom", want)
	}
	d, dch := spawnDriven(t, n.sys)
	spawnMonitorDies(t, n, d, dch, 10, actor.Atom(e2.Name), "erlang:exit", actor.Atom(want), actor.Atom("boom"))
}

package dist_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// RegisterRPC's names: an arity after '/' (0..255), none for every arity;
// the BIFs' names are taken.
func TestRegisterRPCNames(t *testing.T) {
	n := startNode(t, testEPMD(t), dist.Config{EPMD: dist.EPMDNone})
	f := func(*actor.Context, []any) (any, error) { return nil, nil }
	for _, c := range []struct {
		name string
		want error
	}{
		{"add/2", nil},
		{"add/3", nil},
		{"add", nil},
		{"add/2", dist.ErrSpawnRegistered},
		{"m:f/0", nil},
		{"m:f", nil},
		{"m:f/x", nil}, // not an arity: part of the name
		{"add/256", dist.ErrBadConfig},
		{"/2", dist.ErrBadConfig},
		{"erlang:node/0", dist.ErrSpawnRegistered},
		{"erlang:node", dist.ErrSpawnRegistered},
		{"erlang:memory/1", dist.ErrSpawnRegistered},
		{"erlang:node/1", nil}, // not a BIF this node answers
		{"erlang:process_info/2", nil},
	} {
		if err := n.RegisterRPC(c.name, f); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("RegisterRPC(%q) = %v, want %v", c.name, err, c.want)
		}
	}
}

// rexCall is gen_server:call({rex, Node}, {Tag, M, F, A, user}), as an
// OTP 22 node's rpc:call or any node's block_call sends it.
func rexCall(t *testing.T, a *testNode, node actor.Atom, tag, m, f string, args ...any) any {
	t.Helper()
	if args == nil {
		args = []any{}
	}
	v, err := a.CallName(a.sys, "rex", node, etf.Tuple{actor.Atom(tag), actor.Atom(m), actor.Atom(f), args, actor.Atom("user")}, 10*time.Second)
	if err != nil {
		t.Fatalf("rex %s %s:%s%v: %v", tag, m, f, args, err)
	}
	return v
}

// erpcCall is erpc:call(Node, M, F, A) as erpc sends it: a spawn of
// erpc:execute_call(Ref, M, F, A) with a monitor, whose DOWN is the
// result.
func erpcCall(t *testing.T, a *testNode, node actor.Atom, m, f string, args ...any) any {
	t.Helper()
	if args == nil {
		args = []any{}
	}
	res := make(chan any, 1)
	ref := a.MakeRef()
	a.sys.Spawn(initFunc(func(c *actor.Context) {
		_, mref, err := a.SpawnMonitor(c, node, "erpc:execute_call", ref, actor.Atom(m), actor.Atom(f), args)
		if err != nil {
			res <- err
			return
		}
		d, err := c.Receive(func(msg any) bool { d, ok := msg.(actor.Down); return ok && d.Ref == mref }, 10*time.Second)
		if err != nil {
			res <- err
			return
		}
		reason := d.(actor.Down).Reason
		if tup, ok := reason.(etf.Tuple); ok && len(tup) >= 3 && tup[0] == ref {
			reason = etf.Tuple(tup[1:]) // the Ref is erpc's; the rest is the result
		}
		res <- reason
	}))
	select {
	case v := <-res:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("erpc %s:%s%v: no result", m, f, args)
		return nil
	}
}

var (
	atomBadrpc = actor.Atom("badrpc")
	atomEXIT   = actor.Atom("EXIT")
	atomUndef  = actor.Atom("undef")
)

func badrpcExit(reason any) etf.Tuple {
	return etf.Tuple{atomBadrpc, etf.Tuple{atomEXIT, reason}}
}

// rex and erpc between two Colony nodes: a function by its arity (another
// arity is undef), one registered without arity (every arity), a BIF, a
// worker killed before it answered, and block_call.
func TestRexAndErpcColonyToColony(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	if err := b.RegisterRPC("m:add/2", func(_ *actor.Context, args []any) (any, error) {
		return args[0].(int) + args[1].(int), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.RegisterRPC("any", func(_ *actor.Context, args []any) (any, error) { return len(args), nil }); err != nil {
		t.Fatal(err)
	}
	if err := b.RegisterRPC("m:selfkill/0", func(c *actor.Context, _ []any) (any, error) {
		return true, c.Exit(c.Self(), actor.Kill)
	}); err != nil {
		t.Fatal(err)
	}
	bn := b.Name()
	undefOf := func(m, f string, args ...any) etf.Tuple {
		if args == nil {
			args = []any{}
		}
		return etf.Tuple{atomUndef, []any{etf.Tuple{actor.Atom(m), actor.Atom(f), args, []any{}}}}
	}
	for _, c := range []struct {
		name string
		got  any
		want any
	}{
		{"rex call", rexCall(t, a, bn, "call", "m", "add", 1, 2), 3},
		{"rex call, wrong arity", rexCall(t, a, bn, "call", "m", "add", 1), badrpcExit(undefOf("m", "add", 1))},
		{"rex call, any arity (1)", rexCall(t, a, bn, "call", "colony", "any", 1), 1},
		{"rex call, any arity (3)", rexCall(t, a, bn, "call", "colony", "any", 1, 2, 3), 3},
		{"rex block_call", rexCall(t, a, bn, "block_call", "m", "add", 1, 2), 3},
		{"rex block_call, unknown", rexCall(t, a, bn, "block_call", "nosuch", "f"), badrpcExit(undefOf("nosuch", "f"))},
		{"rex call, BIF", rexCall(t, a, bn, "call", "erlang", "node"), bn},
		{"rex call, killed worker", rexCall(t, a, bn, "call", "m", "selfkill"), badrpcExit(actor.Killed)},
		{"erpc", erpcCall(t, a, bn, "m", "add", 1, 2), etf.Tuple{actor.Atom("return"), 3}},
		{"erpc, wrong arity", erpcCall(t, a, bn, "m", "add", 1, 2, 3),
			etf.Tuple{actor.Atom("error"), atomUndef, []any{etf.Tuple{actor.Atom("m"), actor.Atom("add"), []any{1, 2, 3}, []any{}}}}},
		{"erpc, BIF nodes([this, visible])", erpcCall(t, a, bn, "erlang", "nodes", []any{actor.Atom("this"), actor.Atom("visible")}),
			etf.Tuple{actor.Atom("return"), []any{a.Name(), bn}}},
		{"erpc, killed", erpcCall(t, a, bn, "m", "selfkill"), actor.Killed},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

// rex serves nothing else while a block_call runs: a call sent to it
// meanwhile is answered only after the block_call's function returned.
func TestRexBlockCallBlocksRex(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	release := make(chan struct{})
	var released atomic.Bool
	var once sync.Once
	releaseNow := func() { once.Do(func() { released.Store(true); close(release) }) }
	t.Cleanup(releaseNow) // a failed test ends the block_call too
	started := make(chan struct{}, 1)
	if err := b.RegisterRPC("m:wait/0", func(c *actor.Context, _ []any) (any, error) {
		started <- struct{}{}
		return c.Blocking(func() (any, error) { <-release; return actor.Atom("released"), nil }, actor.Infinity)
	}); err != nil {
		t.Fatal(err)
	}
	call := func(tag, m, f string) (any, error) {
		return a.CallName(a.sys, "rex", b.Name(), etf.Tuple{actor.Atom(tag), actor.Atom(m), actor.Atom(f), []any{}, actor.Atom("user")}, 20*time.Second)
	}
	blockDone := make(chan error, 1)
	go func() {
		v, err := call("block_call", "m", "wait")
		if err == nil && v != actor.Atom("released") {
			err = fmt.Errorf("block_call answered %v", v)
		}
		blockDone <- err
	}()
	<-started
	before := b.Stats().Received
	callDone := make(chan bool, 1) // whether the block_call was released when the call was answered
	go func() {
		if v, err := call("call", "erlang", "node"); err != nil || v != b.Name() {
			t.Errorf("call: %v, %v", v, err)
		}
		callDone <- released.Load()
	}()
	// Once the call's request is in b's rex mailbox (Received counts it), a
	// rex that served it would answer within moments.
	eventually(t, 10*time.Second, "the call delivered to rex", func() bool { return b.Stats().Received > before })
	select {
	case <-callDone:
		t.Fatal("the call was answered while the block_call ran")
	case <-time.After(200 * time.Millisecond):
	}
	releaseNow()
	if err := <-blockDone; err != nil {
		t.Fatal(err)
	}
	if !<-callDone {
		t.Error("the call was answered before the block_call was released")
	}
}

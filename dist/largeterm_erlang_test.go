//go:build unix

package dist_test

// Terms OTP sends and takes that pass the old fixed bounds (depth 2,048,
// 16 KiB integers, 64 MiB messages), both ways with a real OTP node: each
// comes back equal, and the connection stays up (no link or monitor over it
// fires, no node down), so a further message still goes through.

import (
	"math/big"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// erlDeepTerms defines, in the Erlang node, the terms of the test by key.
const erlDeepTerms = `
	DeepL = fun(N) -> lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, N)) end,
	DeepT = fun(N) -> lists:foldl(fun(_, A) -> {A} end, {}, lists:seq(1, N)) end,
	DeepM = fun(N) -> lists:foldl(fun(I, A) -> #{I => A} end, #{}, lists:seq(1, N)) end,
	Terms = #{list3k => DeepL(3000), tuple3k => DeepT(3000), map3k => DeepM(3000),
		list100k => DeepL(100000), tuple100k => DeepT(100000), map100k => DeepM(100000),
		iolist5k => lists:foldl(fun(X, Acc) -> [Acc, X] end, [], lists:seq(1, 5000)),
		int50k => binary_to_integer(binary:copy(<<"7">>, 50000)),
		bin70m => binary:copy(<<"0123456789abcdef">>, 70 * 1024 * 1024 div 16)},
	ok.`

// goDeepTerm builds, in Go, the term erlDeepTerms names key.
func goDeepTerm(key string) any {
	switch key {
	case "list3k", "list100k", "tuple3k", "tuple100k", "map3k", "map100k":
		n := 3000
		if strings.HasSuffix(key, "100k") {
			n = 100_000
		}
		var v any
		switch key[:3] {
		case "lis":
			v = []any{}
			for range n {
				v = []any{v}
			}
		case "tup":
			v = etf.Tuple{}
			for range n {
				v = etf.Tuple{v}
			}
		default:
			v = map[any]any{}
			for i := 1; i <= n; i++ {
				v = map[any]any{i: v}
			}
		}
		return v
	case "iolist5k":
		var acc any = []any{}
		for x := 1; x <= 5000; x++ {
			acc = []any{acc, x}
		}
		return acc
	case "int50k":
		x, _ := new(big.Int).SetString(strings.Repeat("7", 50000), 10)
		return x
	case "bin70m":
		return strings.Repeat("0123456789abcdef", 70*1024*1024/16)
	}
	panic(key)
}

var deepKeys = []string{"list3k", "tuple3k", "map3k", "list100k", "tuple100k", "map100k", "iolist5k", "int50k", "bin70m"}

func sameTerm(a, b any) bool {
	if x, ok := a.(*big.Int); ok {
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	}
	return reflect.DeepEqual(a, b)
}

func TestErlangDeepAndLargeTerms(t *testing.T) {
	var downs atomic.Int32
	n, erl := erlPair(t, dist.Config{OnNodeDown: func(actor.Atom, error) { downs.Add(1) }})
	colony := atomLit(n.Name())
	erlAtom := actor.Atom(erl.Name)
	echoPid, err := n.sys.Spawn(&echo{}, actor.Name("echo"))
	if err != nil {
		t.Fatal(err)
	}
	self, inbox := spawnCollector(t, n.sys, 4)
	// An Erlang process links to and monitors the echo server: neither may
	// fire while the terms flow.
	erl.Eval("register(shell, self()).")
	if err := n.SendName(self, "shell", erlAtom, etf.Tuple{actor.Atom("pid"), echoPid}); err != nil {
		t.Fatal(err)
	}
	if v := erl.Eval(`receive {pid, P} -> EchoPid = P, Me = self(),
		Watcher = spawn(fun() -> process_flag(trap_exit, true), link(P), M = monitor(process, P), Me ! watching,
			receive {check, From} -> From ! {watched, receive Sig -> Sig after 0 -> none end} end, demonitor(M) end),
		receive watching -> ok after 5000 -> no_watcher end after 5000 -> no_pid end.`); v != "ok" {
		t.Fatalf("watcher: %s", v)
	}
	if v := erl.Eval(erlDeepTerms); v != "ok" {
		t.Fatalf("terms: %s", v)
	}
	// Erlang sends each term to Colony's echo, which sends it back.
	t.Run("ErlangToColonyAndBack", func(t *testing.T) {
		for _, key := range deepKeys {
			v, err := erl.EvalTimeout(`T_`+key+` = maps:get(`+key+`, Terms), {echo, `+colony+`} ! {self(), T_`+key+`},
				receive R_`+key+` -> R_`+key+` =:= T_`+key+` after 60000 -> timeout end.`, 90*time.Second)
			if err != nil || v != "true" {
				t.Fatalf("%s: Erlang got back %s (%v)", key, v, err)
			}
		}
	})
	// Colony sends each term, built in Go, to an Erlang process that
	// checks it against its own and sends it back.
	t.Run("ColonyToErlangAndBack", func(t *testing.T) {
		if v := erl.Eval(`register(check, spawn(fun L() -> receive {From, Key, M} ->
			From ! {Key, M =:= maps:get(Key, Terms), M}, L() end end)), ok.`); v != "ok" {
			t.Fatalf("check: %s", v)
		}
		for _, key := range deepKeys {
			want := goDeepTerm(key)
			if err := n.SendName(self, "check", erlAtom, etf.Tuple{self, actor.Atom(key), want}); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			r, _ := recv(t, inbox, 60*time.Second).(etf.Tuple)
			if len(r) != 3 || r[0] != actor.Atom(key) {
				t.Fatalf("%s: got %d elements", key, len(r))
			}
			if r[1] != true {
				t.Errorf("%s: Erlang says the term Colony sent is not its own", key)
			}
			if !sameTerm(r[2], want) {
				t.Errorf("%s: the term Erlang sent back differs", key)
			}
		}
	})
	// The connection survived: a further message, no signal, no node down.
	if v := erl.Eval(`{echo, ` + colony + `} ! {self(), still_up}, receive still_up -> ok after 10000 -> timeout end.`); v != "ok" {
		t.Errorf("a message after the terms: %s", v)
	}
	if v := erl.Eval(`Watcher ! {check, self()}, receive {watched, W} -> W after 5000 -> timeout end.`); v != "none" {
		t.Errorf("the Erlang watcher of the echo server got %s", v)
	}
	if d := downs.Load(); d != 0 || len(n.Nodes()) != 1 {
		t.Errorf("node downs %d, nodes %v", d, n.Nodes())
	}
}

// A node with a small MaxMessage refuses a larger send from Erlang, counts
// it and keeps the connection: the next message arrives, and the Erlang
// process linked to and monitoring the receiver sees nothing.
func TestErlangSendPastMaxMessage(t *testing.T) {
	var downs atomic.Int32
	n, erl := erlPair(t, dist.Config{MaxMessage: 1 << 20, OnNodeDown: func(actor.Atom, error) { downs.Add(1) }})
	colony := atomLit(n.Name())
	sink, inbox := spawnCollector(t, n.sys, 4, actor.Name("sink"))
	self, _ := spawnCollector(t, n.sys, 1)
	erl.Eval("register(shell, self()).")
	n.SendName(self, "shell", actor.Atom(erl.Name), sink)
	if v := erl.Eval(`receive P -> Me = self(),
		Watcher = spawn(fun() -> process_flag(trap_exit, true), link(P), monitor(process, P), Me ! watching,
			receive {check, From} -> From ! {watched, receive Sig -> Sig after 0 -> none end} end end),
		receive watching -> ok after 5000 -> no_watcher end after 5000 -> no_pid end.`); v != "ok" {
		t.Fatalf("watcher: %s", v)
	}
	for i, size := range []string{"2 * 1024 * 1024", "200 * 1024 * 1024 div 100"} {
		erl.Eval(`{sink, ` + colony + `} ! binary:copy(<<0>>, ` + size + `), {sink, ` + colony + `} ! after_big, ok.`)
		if v := recv(t, inbox, 30*time.Second); v != actor.Atom("after_big") {
			t.Fatalf("after the big message: %.40q", v)
		}
		if got := n.Stats().Oversized; got != uint64(i+1) {
			t.Errorf("Oversized %d, want %d", got, i+1)
		}
	}
	if v := erl.Eval(`Watcher ! {check, self()}, receive {watched, W} -> W after 5000 -> timeout end.`); v != "none" {
		t.Errorf("the Erlang watcher of the receiver got %s", v)
	}
	if d := downs.Load(); d != 0 || len(n.Nodes()) != 1 {
		t.Errorf("node downs %d, nodes %v", d, n.Nodes())
	}
	if !n.logs.has("past MaxMessage (1048576 bytes)") {
		t.Errorf("no log line for the refused message")
	}
}

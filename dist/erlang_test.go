//go:build unix

package dist_test

// Differential tests against a real Erlang/OTP node. Every test starts its
// own epmd (a free port of 127.0.0.1) and erl nodes (long names at
// 127.0.0.1, a cookie of their own), bounded in time and killed at the end
// (internal/erltest). Without erl they skip loudly; with CI set they fail.

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

var cookieSeq atomic.Int64

// cookie is a cookie unique to the test.
func cookie(t *testing.T) string {
	return fmt.Sprintf("c%d_%d", time.Now().UnixNano(), cookieSeq.Add(1))
}

// erlPair starts, on an epmd of the test's own, a Colony node with cfg
// (its Cookie one of the test's) and an erl node with the same cookie and
// the extra arguments. It needs erl and epmd (erltest.Need).
func erlPair(t *testing.T, cfg dist.Config, extra ...string) (*testNode, *erltest.Node) {
	t.Helper()
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	cfg.Cookie = cookie(t)
	n := startNode(t, port, cfg)
	return n, erltest.Erl(t, port, erlName(), cfg.Cookie, extra...)
}

// erlName is an Erlang node name unique to the test.
func erlName() string { return uniqueName("erl") }

func atomLit(a actor.Atom) string { return "'" + string(a) + "'" }

func TestErlang(t *testing.T) {
	n, erl := erlPair(t, dist.Config{})
	colony := atomLit(n.Name())
	erlAtom := actor.Atom(erl.Name)

	if _, err := n.sys.Spawn(&echo{}, actor.Name("echo")); err != nil {
		t.Fatal(err)
	}

	t.Run("ErlangPingsColony", func(t *testing.T) {
		if v := erl.Eval("net_adm:ping(" + colony + ")."); v != "pong" {
			t.Fatalf("net_adm:ping = %s", v)
		}
		if v := erl.Eval("nodes()."); v != "["+colony+"]" {
			t.Errorf("nodes() = %s", v)
		}
	})
	t.Run("ColonyPingsErlang", func(t *testing.T) {
		if err := n.Ping(ctxT(t, 10*time.Second), erlAtom); err != nil {
			t.Fatal(err)
		}
		if got := n.Nodes(); len(got) != 1 || got[0] != erlAtom {
			t.Errorf("Nodes() = %v", got)
		}
	})
	t.Run("EchoByName", func(t *testing.T) {
		v := erl.Eval(`{echo, ` + colony + `} ! {self(), {hello, <<"bin">>, [1,2,3], #{k => 1.5}}},
			receive M0 -> M0 after 5000 -> timeout end.`)
		if v != `{hello,<<"bin">>,[1,2,3],#{k => 1.5}}` {
			t.Errorf("echo by name: %s", v)
		}
	})
	t.Run("ColonySendsToRegisteredAndEchoByPid", func(t *testing.T) {
		erl.Eval("register(shell, self()).")
		echoPid, _ := n.sys.Whereis("echo")
		if err := n.SendName(echoPid, "shell", erlAtom, etf.Tuple{actor.Atom("pid"), echoPid}); err != nil {
			t.Fatal(err)
		}
		v := erl.Eval(`receive {pid, P1} -> P1 ! {self(), via_pid}, receive R1 -> {node(P1), R1} after 5000 -> timeout end
			after 5000 -> no_pid end.`)
		if v != "{"+colony+",via_pid}" {
			t.Errorf("echo by pid: %s", v)
		}
	})
	t.Run("TenThousandEachWay", func(t *testing.T) {
		// Erlang to Colony, by name.
		_, inbox := spawnCollector(t, n.sys, 10001, actor.Name("sink"))
		erl.Eval(`lists:foreach(fun(I) -> {sink, ` + colony + `} ! I end, lists:seq(0, 9999)).`)
		for i := range 10000 {
			if v := recv(t, inbox, 10*time.Second); v != i {
				t.Fatalf("message %d from Erlang is %#v", i, v)
			}
		}
		// Colony to Erlang, to a registered process that checks the order.
		erl.Eval(`Me = self(), register(esink, spawn(fun() ->
			L = fun L(10000) -> Me ! {sink_done, 10000};
			        L(N) -> receive N -> L(N + 1); Other -> Me ! {sink_bad, N, Other} end end,
			L(0) end)), ok.`)
		self, _ := spawnCollector(t, n.sys, 1)
		for i := range 10000 {
			if err := n.SendName(self, "esink", erlAtom, i); err != nil {
				t.Fatal(err)
			}
		}
		if v := erl.Eval("receive {sink_done, _} = R2 -> R2; {sink_bad, _, _} = R2 -> R2 after 20000 -> {timeout, process_info(whereis(esink), [message_queue_len, current_function])} end."); v != "{sink_done,10000}" {
			t.Errorf("Erlang sink: %s", v)
		}
	})
	t.Run("LargeBinaryBothWays", func(t *testing.T) {
		const size = 3 << 19 // 1.5 MiB
		in0 := n.Stats().FragmentedIn
		_, inbox := spawnCollector(t, n.sys, 2, actor.Name("bigsink"))
		want := erl.Eval(`Big = list_to_binary([I rem 251 || I <- lists:seq(1, ` + fmt.Sprint(size) + `)]),
			{bigsink, ` + colony + `} ! {big, Big}, binary:encode_hex(erlang:md5(Big)).`)
		m, _ := recv(t, inbox, 20*time.Second).(etf.Tuple)
		if len(m) != 2 || m[0] != actor.Atom("big") {
			t.Fatalf("got %#v", m)
		}
		got := m[1].(string)
		if sum := fmt.Sprintf(`<<"%X">>`, md5.Sum([]byte(got))); len(got) != size || sum != want {
			t.Fatalf("binary from Erlang: %d bytes, md5 %s, want %s", len(got), sum, want)
		}
		if n.Stats().FragmentedIn == in0 {
			t.Errorf("the binary from Erlang did not come as fragments")
		}
		// Colony to Erlang: Erlang answers with the size and the md5.
		erl.Eval(`Me2 = self(), register(ebig, spawn(fun() -> receive B3 -> Me2 ! {byte_size(B3), binary:encode_hex(erlang:md5(B3))} end end)), ok.`)
		out0 := n.Stats().FragmentedOut
		payload := bytes.Repeat([]byte("colony!"), size/7+1)
		self, _ := spawnCollector(t, n.sys, 1)
		if err := n.SendName(self, "ebig", erlAtom, payload); err != nil {
			t.Fatal(err)
		}
		v := erl.Eval("receive R3 -> R3 after 20000 -> timeout end.")
		if w := fmt.Sprintf(`{%d,<<"%X">>}`, len(payload), md5.Sum(payload)); v != w {
			t.Errorf("Erlang got %s, want %s", v, w)
		}
		if n.Stats().FragmentedOut == out0 {
			t.Errorf("the binary to Erlang did not go as fragments")
		}
	})
	t.Run("TraceTokenSends", func(t *testing.T) {
		// With a sequential trace token set, OTP sends REG_SEND_TT and
		// SEND_SENDER_TT: accepted, the token ignored.
		v := erl.Eval(`seq_trace:set_token(label, 17), {echo, ` + colony + `} ! {self(), traced},
			seq_trace:set_token([]), receive M4 -> M4 after 5000 -> timeout end.`)
		if v != "traced" {
			t.Errorf("echo of a traced send: %s", v)
		}
	})
	t.Run("Aliases", func(t *testing.T) {
		// Erlang sends to a Colony alias (ALIAS_SEND to Colony)...
		pid, inbox := spawnCollector(t, n.sys, 4)
		alias := n.Alias(pid)
		defer n.Unalias(alias)
		self, _ := spawnCollector(t, n.sys, 1)
		erl.Eval("catch register(shell, self()).") // registered already if the subtests before ran
		n.SendName(self, "shell", erlAtom, etf.Tuple{actor.Atom("alias"), alias})
		erl.Eval(`receive {alias, A5} -> A5 ! via_alias after 5000 -> no_alias end.`)
		if v := recv(t, inbox, 10*time.Second); v != actor.Atom("via_alias") {
			t.Errorf("Colony alias got %#v", v)
		}
		// ...and Colony to an Erlang alias.
		_, sink2 := spawnCollector(t, n.sys, 1, actor.Name("sink2"))
		erl.Eval(`A6 = alias(), {sink2, ` + colony + `} ! {erl_alias, A6}, ok.`)
		m, _ := recv(t, sink2, 10*time.Second).(etf.Tuple)
		eref, ok := m[1].(etf.Ref)
		if !ok {
			t.Fatalf("got %#v", m)
		}
		if err := n.SendAlias(self, eref, actor.Atom("to_erl_alias")); err != nil {
			t.Fatal(err)
		}
		if v := erl.Eval(`receive to_erl_alias -> got after 5000 -> timeout end.`); v != "got" {
			t.Errorf("Erlang alias: %s", v)
		}
	})
	t.Run("ErlangCallsMissingName", func(t *testing.T) {
		// gen:call monitors the name first: a name nobody holds on the
		// Colony node answers noproc at once (MONITOR_P_EXIT).
		v := erl.Eval(`catch gen_server:call({nobody, ` + colony + `}, hi, 5000).`)
		if !strings.Contains(v, "noproc") {
			t.Errorf("call of a missing name: %s", v)
		}
	})
}

func TestErlangWrongCookie(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	n := startNode(t, port, dist.Config{Cookie: cookie(t)})
	erl := erltest.Erl(t, port, erlName(), cookie(t))
	if v := erl.Eval("net_adm:ping(" + atomLit(n.Name()) + ")."); v != "pang" {
		t.Errorf("Erlang with another cookie: %s", v)
	}
	eventually(t, 5*time.Second, "Colony's log line", func() bool { return n.logs.has("invalid challenge reply (wrong cookie)") })
	if err := n.Ping(ctxT(t, 10*time.Second), actor.Atom(erl.Name)); !errors.Is(err, dist.ErrPang) {
		t.Errorf("Colony with another cookie: %v", err)
	}
	eventually(t, 5*time.Second, "Colony's log line as initiator", func() bool {
		return n.logs.has("Connection attempt to node " + erl.Name + " rejected: invalid challenge reply")
	})
	eventually(t, 5*time.Second, "Erlang's log line", func() bool {
		return strings.Contains(erl.Logs(), "Connection attempt from node "+atomLit(n.Name())+" rejected")
	})
	if len(n.Nodes()) != 0 {
		t.Errorf("connected: %v", n.Nodes())
	}
}

// The Erlang node is killed while it streams messages to Colony: the
// connection is reported down (within the tick window: at once here, as
// the kernel closes the socket).
func TestErlangKilledMidStream(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	downs := make(chan error, 1)
	n := startNode(t, port, dist.Config{Cookie: ck, TickTime: 4 * time.Second,
		OnNodeDown: func(_ actor.Atom, r error) { downs <- r }})
	erl := erltest.Erl(t, port, erlName(), ck, "-kernel", "net_ticktime", "4")
	_, inbox := spawnCollector(t, n.sys, 1024, actor.Name("sink"))
	erl.Eval(`spawn(fun() -> L = fun L(I) -> {sink, ` + atomLit(n.Name()) + `} ! I, timer:sleep(1), L(I + 1) end, L(0) end), ok.`)
	for i := range 50 {
		if v := recv(t, inbox, 10*time.Second); v != i {
			t.Fatalf("message %d: %#v", i, v)
		}
	}
	killed := time.Now()
	erl.Signal(syscall.SIGKILL)
	select {
	case r := <-downs:
		t.Logf("down after %v: %v", time.Since(killed), r)
	case <-time.After(5 * time.Second):
		t.Fatal("the killed node was not reported down within the tick window")
	}
}

// A frozen Erlang node (SIGSTOP: its socket stays open, nothing comes) is
// declared down by the ticks: between 3/4 and 5/4 of TickTime.
func TestErlangFrozenTickTimeout(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	downs := make(chan error, 1)
	const tick = 4 * time.Second
	n := startNode(t, port, dist.Config{Cookie: ck, TickTime: tick,
		OnNodeDown: func(_ actor.Atom, r error) { downs <- r }})
	erl := erltest.Erl(t, port, erlName(), ck, "-kernel", "net_ticktime", "4")
	if v := erl.Eval("net_adm:ping(" + atomLit(n.Name()) + ")."); v != "pong" {
		t.Fatalf("ping: %s", v)
	}
	frozen := time.Now()
	erl.Signal(syscall.SIGSTOP)
	defer erl.Signal(syscall.SIGCONT)
	select {
	case r := <-downs:
		d := time.Since(frozen)
		t.Logf("down after %v: %v", d, r)
		if !errors.Is(r, dist.ErrTickTimeout) {
			t.Errorf("reason %v, want ErrTickTimeout", r)
		}
		if d < tick*3/4-100*time.Millisecond || d > tick*5/4+time.Second {
			t.Errorf("declared down after %v, outside [3/4, 5/4] of %v", d, tick)
		}
	case <-time.After(3 * tick):
		t.Fatal("the frozen node was not declared down")
	}
	if !n.logs.has("not responding") {
		t.Errorf("no log line for the tick timeout")
	}
}

func TestErlangHidden(t *testing.T) {
	n, erl := erlPair(t, dist.Config{Hidden: true})
	if v := erl.Eval("net_adm:ping(" + atomLit(n.Name()) + ")."); v != "pong" {
		t.Fatalf("ping: %s", v)
	}
	if v := erl.Eval("{nodes(), nodes(hidden)}."); v != "{[],["+atomLit(n.Name())+"]}" {
		t.Errorf("Erlang sees %s", v)
	}
	eventually(t, 5*time.Second, "the hidden connection", func() bool { return len(n.HiddenNodes()) == 1 })
	if len(n.Nodes()) != 0 {
		t.Errorf("Colony's Nodes: %v", n.Nodes())
	}
}

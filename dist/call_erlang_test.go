//go:build unix

package dist_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

// peerModule is the Erlang side of the call and spawn tests: kv, a
// gen_server speaking what kvServer speaks (call_test.go); scenario/1, the
// calls an Erlang caller makes of {kv, Node}, with their results
// normalised so that runs against different nodes compare equal; worker/1,
// what the Go behaviour "worker" does (spawn_test.go); and
// spawn_scenario/3, the spawns an Erlang node asks of another.
const peerModule = `-module(callpeer).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2, handle_info/2,
         scenario/1, worker/1, spawn_scenario/3,
         add/2, fails/0, note/1, erpc_scenario/2, big/1, size_of/1, big_scenario/4]).

start() ->
    {ok, P} = gen_server:start({local, kv}, ?MODULE, [], []),
    P.

init([]) -> {ok, #{held => [], last => undefined, n => 0}}.

handle_call(ping, _F, S) -> {reply, pong, S};
handle_call(self, _F, S) -> {reply, self(), S};
handle_call({echo, X}, _F, S) -> {reply, X, S};
handle_call(fail, _F, S) -> {reply, {error, <<"kv: failed on purpose">>}, S};
handle_call(hold, F, S = #{held := H}) -> {noreply, S#{held := [F | H]}};
handle_call(die, _F, S) -> {stop, boom, S};
handle_call({die, R}, _F, S) -> {stop, R, S};
handle_call(last_cast, _F, S = #{last := L}) -> {reply, L, S}.

handle_cast(release, S = #{held := H, n := N}) ->
    N2 = lists:foldl(fun(F, I) -> gen_server:reply(F, {released, I + 1}), I + 1 end,
                     N, lists:reverse(H)),
    {noreply, S#{held := [], n := N2}};
handle_cast(M, S) -> {noreply, S#{last := M}}.

handle_info(_, S) -> {noreply, S}.

call(N, Name, Req, T) ->
    try gen_server:call({Name, N}, Req, T)
    catch exit:{R, {gen_server, call, _}} -> {exit, norm(R)}
    end.

norm({nodedown, _}) -> nodedown;
norm(R) -> R.

flush(Acc) -> receive M -> flush([M | Acc]) after 200 -> lists:reverse(Acc) end.

scenario(N) ->
    R1 = call(N, kv, ping, 5000),
    R2 = call(N, kv, {echo, [1, <<"two">>, 3.5, {t, x}]}, 5000),
    R3 = call(N, kv, fail, 5000),
    R4 = call(N, kv, hold, 100),
    gen_server:cast({kv, N}, release),
    R5 = call(N, kv, ping, 5000),
    Stray = flush([]),
    gen_server:cast({kv, N}, {put, 7}),
    R6 = call(N, kv, last_cast, 5000),
    R7 = call(N, nobody, ping, 5000),
    R8 = call(N, kv, die, 5000),
    R9 = call('nosuchnode@127.0.0.1', kv, ping, 5000),
    [R1, R2, R3, R4, R5, Stray, R6, R7, R8, R9].

worker(Parent) ->
    Parent ! {hello, self(), 1},
    worker_loop().

worker_loop() ->
    receive
        {ping, From} -> From ! {pong, self()}, worker_loop();
        stop -> exit(bye)
    end.

spawn_scenario(N, M, F) ->
    process_flag(trap_exit, true),
    Me = self(),
    P1 = spawn(N, M, F, [Me]),
    H1 = receive {hello, P1, A1} -> {hello, A1} after 5000 -> no_hello end,
    P1 ! {ping, Me},
    G1 = receive {pong, P1} -> pong after 5000 -> no_pong end,
    P1 ! stop,
    P2 = spawn_link(N, M, F, [Me]),
    receive {hello, P2, _} -> ok after 5000 -> no_hello end,
    P2 ! stop,
    E2 = receive {'EXIT', P2, R2} -> {exit, R2} after 5000 -> no_exit end,
    {P3, Ref3} = spawn_monitor(N, M, F, [Me]),
    receive {hello, P3, _} -> ok after 5000 -> no_hello end,
    P3 ! stop,
    D3 = receive {'DOWN', Ref3, process, P3, R3} -> {down, R3} after 5000 -> no_down end,
    Req = spawn_request(N, M, F, [Me], [monitor]),
    S4 = receive {spawn_reply, Req, ok, P4} -> {ok, node(P4) =:= N} after 5000 -> no_reply end,
    receive {hello, _, _} -> ok after 5000 -> no_hello end,
    D4 = receive {'DOWN', Req, process, _, R4} -> {down, R4} after 0 -> none end,
    %% A function that does not exist: a process that dies of undef.
    U = fun({undef, [{M0, F0, [A0], []}]}) when M0 =:= M, A0 =:= Me -> {undef, [{m, F0, [me], []}]};
           (R) -> {unexpected, R} end,
    Bad = try spawn(N, M, nosuch_function_here, [Me]) of P5 -> {pid, node(P5) =:= N}
          catch error:B -> {error, B} end,
    {P6, Ref6} = spawn_monitor(N, M, nosuch_function_here, [Me]),
    D6 = receive {'DOWN', Ref6, process, P6, R6} -> {down, U(R6)} after 5000 -> no_down end,
    P7 = spawn_link(N, M, nosuch_function_here, [Me]),
    E7 = receive {'EXIT', P7, R7} -> {exit, U(R7)} after 5000 -> no_exit end,
    Req8 = spawn_request(N, M, nosuch_function_here, [Me], [monitor]),
    D8 = receive {spawn_reply, Req8, ok, P8} ->
             receive {'DOWN', Req8, process, P8, R8} -> {ok, U(R8)} after 5000 -> no_down end
         after 5000 -> no_reply end,
    Req9 = spawn_request(N, M, nosuch_function_here, [Me], []),
    S9 = receive {spawn_reply, Req9, ok, P9} -> {ok, node(P9) =:= N} after 5000 -> no_reply end,
    [H1, G1, E2, D3, S4, D4, node(P1) =:= N, Bad, D6, E7, D8, S9, flush([])].

add(A, B) -> A + B.
fails() -> error(<<"kv: failed on purpose">>).
note(P) -> P ! noted, ok.

erpc_scenario(N, M) ->
    R1 = erpc:call(N, M, add, [1, 2]),
    R2 = try erpc:call(N, nosuchmod, f, [1])
         catch error:{exception, undef, [{nosuchmod, f, [1], _} | _]} -> undef end,
    R3 = try erpc:call(N, M, fails, []) catch error:{exception, R, _} -> {error, R} end,
    ok = erpc:cast(N, M, note, [self()]),
    R4 = receive noted -> noted after 5000 -> no_note end,
    R5 = try erpc:call(N, M, add, [1, 2], 5000) catch C:E -> {C, E} end,
    R6 = rpc:call(N, M, add, [2, 3]),
    R7 = case rpc:call(N, nosuchmod, f, [1]) of
             {badrpc, {'EXIT', {undef, [{nosuchmod, f, [1], _} | _]}}} -> badrpc_undef;
             Other -> Other
         end,
    [R1, R2, R3, R4, R5, R6, R7].

big(Size) -> binary:copy(<<"r">>, Size).
size_of(B) -> byte_size(B).

%% Terms of about Size bytes, past a distribution fragment: a call's
%% request and reply, an erpc:call result (M:big/1) and argument
%% (M:size_of/1, in the spawn request erpc sends), and a gen_server's
%% stop with such a reason (Kind crash: the term itself, which the server's
%% node reports; shutdown: {shutdown, Term}, which it does not), seen by
%% the call's monitor, a link and a monitor. Then the connection is the one
%% it was (no nodedown) and answers a ping.
big_scenario(N, M, Size, Kind) ->
    process_flag(trap_exit, true),
    Big = {big, binary:copy(<<"why">>, Size div 3), lists:seq(1, 100)},
    Why = case Kind of crash -> Big; shutdown -> {shutdown, Big} end,
    D = fun(R) when R =:= Big -> big;
           ({shutdown, R}) when R =:= Big -> {shutdown, big};
           (R) -> {other, erlang:external_size(R)} end,
    monitor_node(N, true),
    Echo = D(call(N, kv, {echo, Big}, 30000)),
    Want = binary:copy(<<"r">>, Size),
    Rpc = case erpc:call(N, M, big, [Size], 30000) of
              Want -> big;
              B -> {other, erlang:external_size(B)}
          end,
    Arg = erpc:call(N, M, size_of, [Want], 30000) =:= Size, % a large SPAWN_REQUEST argument
    P = call(N, kv, self, 5000),
    link(P),
    Mon = monitor(process, P),
    Crash = case call(N, kv, {die, Why}, 30000) of {exit, R0} -> {exit, D(R0)}; R0 -> D(R0) end,
    Exit = receive {'EXIT', P, R1} -> D(R1) after 10000 -> timeout end,
    Down = receive {'DOWN', Mon, process, P, R2} -> D(R2) after 10000 -> timeout end,
    Ping = net_adm:ping(N),
    Extra = receive {nodedown, N} -> nodedown after 100 -> none end,
    monitor_node(N, false),
    process_flag(trap_exit, false),
    [Echo, Rpc, Arg, Crash, Exit, Down, Ping, Extra].
`

// erlPeers starts two Erlang nodes with callpeer loaded, and a Colony node
// with the same cookie.
func erlPeers(t *testing.T) (n *testNode, e1, e2 *erltest.Node) {
	t.Helper()
	erltest.Need(t, "erl", "erlc", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	dir := erltest.Compile(t, "callpeer", peerModule)
	n = startNode(t, port, dist.Config{Cookie: ck})
	e1 = erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	e2 = erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	return n, e1, e2
}

// gen_server:call from Erlang to a Colony Server gives what it gives to an
// Erlang gen_server: replies, a deferred reply, an error reply, a timeout
// with no stray reply afterwards, casts, an unknown name (noproc), the
// callee's death (its reason) and an unknown node (nodedown).
func TestErlangCallsColonyServer(t *testing.T) {
	n, e1, e2 := erlPeers(t)
	startKV(t, n.sys, "kv")
	if v := e2.Eval("is_pid(callpeer:start())."); v != "true" {
		t.Fatalf("start kv on %s: %s", e2.Name, v)
	}
	want := e1.Eval("callpeer:scenario(" + atomLit(actor.Atom(e2.Name)) + ").")
	got := e1.Eval("callpeer:scenario(" + atomLit(n.Name()) + ").")
	t.Logf("Erlang -> Erlang: %s", want)
	if got != want {
		t.Fatalf("Erlang -> Colony:\n  %s\nwant (Erlang -> Erlang):\n  %s", got, want)
	}
	const expect = `[pong,[1,<<"two">>,3.5,{t,x}],{error,<<"kv: failed on purpose">>},{exit,timeout},pong,[],{put,7},{exit,noproc},{exit,boom},{exit,nodedown}]`
	if want != expect {
		t.Errorf("the Erlang reference changed: %s", want)
	}
}

// A Colony caller of an Erlang gen_server gets what an Erlang caller gets:
// the same scenario, its results sent to Erlang to be printed, compared
// with an Erlang caller's.
func TestColonyCallsErlangServer(t *testing.T) {
	n, e1, e2 := erlPeers(t)
	e2atom := actor.Atom(e2.Name)
	if v := e2.Eval("is_pid(callpeer:start())."); v != "true" {
		t.Fatalf("start kv on %s: %s", e2.Name, v)
	}
	want := e1.Eval("callpeer:scenario(" + atomLit(e2atom) + ").")
	// The reference killed kv (die): start it again for the Colony run.
	if v := e2.Eval("is_pid(callpeer:start())."); v != "true" {
		t.Fatalf("restart kv on %s: %s", e2.Name, v)
	}

	res := make(chan []any, 1)
	n.sys.Spawn(initFunc(func(c *actor.Context) {
		call := func(node actor.Atom, name string, req any, timeout time.Duration) any {
			v, err := n.CallName(c, name, node, req, timeout)
			if err != nil {
				return etf.Tuple{actor.Atom("exit"), errReason(err)}
			}
			return v
		}
		var r []any
		r = append(r, call(e2atom, "kv", atomPing, 5*time.Second))
		// By pid from here on, where the scenario allows: Context.Call.
		kv, _ := call(e2atom, "kv", atomSelf, 5*time.Second).(actor.Pid)
		v, err := c.Call(kv, etf.Tuple{atomEcho, []any{1, "two", 3.5, etf.Tuple{actor.Atom("t"), actor.Atom("x")}}}, 5*time.Second)
		if err != nil {
			v = etf.Tuple{actor.Atom("exit"), errReason(err)}
		}
		r = append(r, v)
		r = append(r, call(e2atom, "kv", atomFail, 5*time.Second))
		r = append(r, call(e2atom, "kv", atomHold, 100*time.Millisecond))
		actor.Cast(c, kv, atomRelease)
		r = append(r, call(e2atom, "kv", atomPing, 5*time.Second))
		stray := []any{}
		for {
			m, err := c.Receive(func(any) bool { return true }, 200*time.Millisecond)
			if err != nil {
				break
			}
			stray = append(stray, m)
		}
		r = append(r, stray)
		n.CastName(c.Self(), "kv", e2atom, etf.Tuple{actor.Atom("put"), 7})
		r = append(r, call(e2atom, "kv", atomLastCast, 5*time.Second))
		r = append(r, call(e2atom, "nobody", atomPing, 5*time.Second))
		r = append(r, call(e2atom, "kv", atomDie, 5*time.Second))
		r = append(r, call("nosuchnode@127.0.0.1", "kv", atomPing, 5*time.Second))
		res <- r
	}))
	var r []any
	select {
	case r = <-res:
	case <-time.After(60 * time.Second):
		t.Fatal("the Colony caller did not finish")
	}
	// Erlang prints the Colony caller's results.
	e1.Eval("register(results, self()).")
	if err := n.SendName(actor.Pid{}, "results", actor.Atom(e1.Name), r); err != nil {
		t.Fatal(err)
	}
	got := e1.Eval("receive L when is_list(L) -> L after 10000 -> no_results end.")
	if got != want {
		t.Fatalf("Colony -> Erlang:\n  %s\nwant (Erlang -> Erlang):\n  %s", got, want)
	}
}

// errReason is a call error as the reason an Erlang caller exits with,
// normalised as callpeer:norm/1 does.
func errReason(err error) any {
	var ce *actor.CallExitError
	switch {
	case errors.Is(err, actor.ErrTimeout):
		return actor.Atom("timeout")
	case errors.Is(err, dist.ErrNoConnection):
		return actor.Atom("nodedown")
	case errors.As(err, &ce):
		return ce.Reason
	case errors.Is(err, actor.ErrNoProc):
		return actor.NoProc
	}
	return err.Error()
}

// The reply's other route: a caller with an old-style tag (a plain
// reference, as before OTP 24) is answered at its pid; a Colony call of an
// Erlang process that answers by hand, From ! {Tag, Reply}, takes that
// reply from its pid, and leaves no stray after a timeout either.
func TestCallRepliesByPid(t *testing.T) {
	n, e := erlPair(t, dist.Config{})
	startKV(t, n.sys, "kv")
	colony := atomLit(n.Name())
	if v := e.Eval(`Ref = make_ref(), {kv, ` + colony + `} ! {'$gen_call', {self(), Ref}, ping},
		receive {Ref, R} -> R after 5000 -> timeout end.`); v != "pong" {
		t.Errorf("old-style call: %s", v)
	}

	// An Erlang process that answers calls by hand, the second one late.
	e.Eval(`register(byhand, spawn(fun() ->
		receive {'$gen_call', {P1, T1}, Q1} -> P1 ! {T1, {got, Q1}} end,
		receive {'$gen_call', {P2, T2}, _} -> timer:sleep(300), P2 ! {T2, late} end,
		receive {'$gen_call', {P3, T3}, Q3} -> P3 ! {T3, {got, Q3}} end
	end)), ok.`)
	eatom := actor.Atom(e.Name)
	type out struct {
		vs    []any
		stray []any
	}
	res := make(chan out, 1)
	n.sys.Spawn(initFunc(func(c *actor.Context) {
		var o out
		for _, timeout := range []time.Duration{5 * time.Second, 100 * time.Millisecond, 5 * time.Second} {
			v, err := n.CallName(c, "byhand", eatom, 42, timeout)
			if err != nil {
				v = errReason(err)
			}
			o.vs = append(o.vs, v)
		}
		for {
			m, err := c.Receive(func(any) bool { return true }, 200*time.Millisecond)
			if err != nil {
				break
			}
			o.stray = append(o.stray, m)
		}
		res <- o
	}))
	var o out
	select {
	case o = <-res:
	case <-time.After(30 * time.Second):
		t.Fatal("the caller did not finish")
	}
	got := etf.Tuple{actor.Atom("got"), 42}
	if len(o.vs) != 3 || !tupleIs(o.vs[0], got[0].(actor.Atom), 42) || o.vs[1] != actor.Atom("timeout") || !tupleIs(o.vs[2], got[0].(actor.Atom), 42) {
		t.Errorf("replies by hand: %#v", o.vs)
	}
	if len(o.stray) != 0 {
		t.Errorf("stray messages: %#v", o.stray)
	}
}

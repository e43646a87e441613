//go:build unix

package dist_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

// rexPeerModule is the Erlang side of the rpc tests: the functions the
// target node defines (add/2, fails/0, note/1, slow/1, selfkill/0; on a
// Colony node they are registered with RegisterRPC), and scenario/1, every
// way an Erlang node calls another (erpc, rpc:call, block_call, multicall,
// cast, async_call and yield, rex's own messages) of those functions, of
// functions nothing defines, of a wrong arity, of the BIFs, and of funs of
// a module only the caller has (rexfun). Results are normalised by norm/2
// (the target's name and pids, the caller's, references) so that runs
// against different nodes compare equal.
const rexPeerModule = `-module(rexpeer).
-export([add/2, fails/0, note/1, slow/1, selfkill/0, scenario/1, colony_only/1]).

add(A, B) -> A + B.
fails() -> error(<<"rexpeer: failed on purpose">>).
note(P) -> P ! noted, ok.
slow(T) -> timer:sleep(T), ok.
selfkill() -> exit(self(), kill).

t(F) -> try F() catch C:R -> {caught, C, R} end.

recv(X) -> receive X -> X after 5000 -> {none, X} end.

nostack({caught, error, {exception, R, S}}) when is_list(S) -> {caught, error, {exception, R, stack}};
nostack({badrpc, {'EXIT', {R, S}}}) when is_list(S) -> {badrpc, {'EXIT', {R, stack}}};
nostack(X) -> X.

norm(N, X) when X =:= N -> target;
norm(_, X) when X =:= node() -> me;
norm(N, X) when is_pid(X) ->
    case node(X) of N -> target_pid; Me when Me =:= node() -> my_pid; _ -> other_pid end;
norm(_, X) when is_reference(X) -> ref;
norm(_, X) when is_function(X) -> {module, M} = erlang:fun_info(X, module), {'fun', M};
norm(N, [H | T]) -> [norm(N, H) | norm(N, T)];
norm(N, X) when is_tuple(X) -> list_to_tuple(norm(N, tuple_to_list(X)));
norm(N, X) when is_map(X) -> maps:map(fun(_, V) -> norm(N, V) end, X);
norm(_, X) -> X.

%% Two block_calls at once take at least the two calls' time: rex runs a
%% block_call in its own stead, serving nothing else meanwhile.
block_serial(N) ->
    Me = self(),
    T0 = erlang:monotonic_time(millisecond),
    [spawn(fun() -> Me ! {bc, rpc:block_call(N, rexpeer, slow, [300])} end) || _ <- [1, 2]],
    Rs = [receive {bc, R} -> R after 10000 -> none end || _ <- [1, 2]],
    {Rs, erlang:monotonic_time(millisecond) - T0 >= 600}.

scenario(N) ->
    Me = self(),
    Fun = rexfun:f(),
    GL = group_leader(),
    R = [
     {erpc_add, t(fun() -> erpc:call(N, rexpeer, add, [1, 2]) end)},
     {erpc_wrong_arity, t(fun() -> erpc:call(N, rexpeer, add, [1]) end)},
     {erpc_unknown, t(fun() -> erpc:call(N, nosuchmod, f, [1]) end)},
     {erpc_fails, nostack(t(fun() -> erpc:call(N, rexpeer, fails, []) end))},
     {erpc_killed, t(fun() -> erpc:call(N, rexpeer, selfkill, []) end)},
     {rpc_add, rpc:call(N, rexpeer, add, [1, 2])},
     {rpc_wrong_arity, rpc:call(N, rexpeer, add, [1])},
     {rpc_unknown, rpc:call(N, nosuchmod, f, [1])},
     {rpc_fails, nostack(rpc:call(N, rexpeer, fails, []))},
     {rpc_timeout, rpc:call(N, rexpeer, slow, [5000], 100)},
     {block_add, rpc:block_call(N, rexpeer, add, [1, 2])},
     {block_wrong_arity, rpc:block_call(N, rexpeer, add, [1])},
     {block_unknown, rpc:block_call(N, nosuchmod, f, [1])},
     {block_fails, nostack(rpc:block_call(N, rexpeer, fails, []))},
     {block_with_timeout, rpc:block_call(N, rexpeer, add, [1, 2], 5000)},
     {block_bif, rpc:block_call(N, erlang, node, [])},
     {block_serial, block_serial(N)},
     {multicall, rpc:multicall([N, N], rexpeer, add, [1, 2])},
     {multicall_bad, rpc:multicall([N, 'nosuchnode@127.0.0.1'], nosuchmod, f, [])},
     {multicall_arity, rpc:multicall([N], rexpeer, add, [1])},
     {yield, rpc:yield(rpc:async_call(N, rexpeer, add, [1, 2]))},
     {yield_unknown, rpc:yield(rpc:async_call(N, nosuchmod, f, [1]))},
     {yield_arity, rpc:yield(rpc:async_call(N, rexpeer, add, [1]))},
     {nb_yield, begin K = rpc:async_call(N, rexpeer, add, [1, 2]), rpc:nb_yield(K, 5000) end},
     {cast, rpc:cast(N, rexpeer, note, [Me]), recv(noted)},
     {erpc_cast, erpc:cast(N, rexpeer, note, [Me]), recv(noted)},
     {rex_cast, gen_server:cast({rex, N}, {cast, rexpeer, note, [Me], GL}), recv(noted)},
     {rex_call, gen_server:call({rex, N}, {call, rexpeer, add, [1, 2], GL})},
     {rex_call_unknown, gen_server:call({rex, N}, {call, nosuchmod, f, [1], GL})},
     {rex_call_killed, gen_server:call({rex, N}, {call, rexpeer, selfkill, [], GL})},
     {rex_cnode_call, begin {rex, N} ! {Me, {call, rexpeer, add, [1, 2], user}},
                            receive {rex, X1} -> X1 after 5000 -> none end end},
     {rex_features, begin {rex, N} ! {Me, features_request},
                          receive {features_reply, N, L1} -> L1 after 5000 -> none end end},
     {rex_send, begin {rex, N} ! {Me, {send, nobody_here, x}},
                      receive {rex, N, X2} -> X2 after 5000 -> none end end},
     {sbcast, rpc:sbcast([N], rex, not_for_rex)},
     {sbcast_nobody, rpc:sbcast([N], nobody_here, x)},
     {rex_ignores, catch gen_server:call({rex, N}, not_rpc, 300)},
     {node, t(fun() -> erpc:call(N, erlang, node, []) end)},
     {node_rpc, rpc:call(N, erlang, node, [])},
     {node_arity, t(fun() -> erpc:call(N, erlang, node, [1, 2]) end)},
     {nodes, t(fun() -> L = erpc:call(N, erlang, nodes, []), {lists:member(node(), L), lists:member(N, L)} end)},
     {nodes_this, t(fun() -> erpc:call(N, erlang, nodes, [this]) end)},
     {nodes_known, t(fun() -> L = erpc:call(N, erlang, nodes, [[visible, this]]),
                               {lists:member(node(), L), lists:member(N, L)} end)},
     {nodes_bad, t(fun() -> erpc:call(N, erlang, nodes, [bad]) end)},
     {is_alive, t(fun() -> erpc:call(N, erlang, is_alive, []) end)},
     {whereis, t(fun() -> erpc:call(N, erlang, whereis, [rex]) end)},
     {whereis_none, t(fun() -> erpc:call(N, erlang, whereis, [nobody_here]) end)},
     {whereis_bad, t(fun() -> erpc:call(N, erlang, whereis, [1]) end)},
     {registered, t(fun() -> lists:member(rex, erpc:call(N, erlang, registered, [])) end)},
     {alive, t(fun() -> erpc:call(N, erlang, is_process_alive, [erpc:call(N, erlang, whereis, [rex])]) end)},
     {alive_remote, t(fun() -> erpc:call(N, erlang, is_process_alive, [Me]) end)},
     {processes, t(fun() -> Rex = erpc:call(N, erlang, whereis, [rex]), Ps = erpc:call(N, erlang, processes, []),
                            {lists:member(Rex, Ps), lists:usort([node(P) || P <- Ps]) =:= [N]} end)},
     {otp_release, rpc:call(N, erlang, system_info, [otp_release])},
     {system_info, [{K, t(fun() -> V = erpc:call(N, erlang, system_info, [K]), is_integer(V) andalso V > 0 end)}
                    || K <- [process_count, schedulers, schedulers_online, logical_processors, wordsize]]},
     {system_version, t(fun() -> io_lib:printable_list(erpc:call(N, erlang, system_info, [system_version])) end)},
     {system_info_bad, t(fun() -> erpc:call(N, erlang, system_info, [nosuchkey]) end)},
     {statistics, [{K, t(fun() -> {A, B} = erpc:call(N, erlang, statistics, [K]), is_integer(A) andalso is_integer(B) end)}
                   || K <- [runtime, wall_clock]]},
     {run_queue, t(fun() -> is_integer(erpc:call(N, erlang, statistics, [run_queue])) end)},
     {statistics_bad, t(fun() -> erpc:call(N, erlang, statistics, [bad]) end)},
     {memory, t(fun() -> M = erpc:call(N, erlang, memory, []),
                         {[K || {K, _} <- M], lists:all(fun({_, V}) -> is_integer(V) andalso V >= 0 end, M),
                          proplists:get_value(total, M) =:= proplists:get_value(processes, M) + proplists:get_value(system, M)} end)},
     {memory_total, t(fun() -> is_integer(erpc:call(N, erlang, memory, [total])) end)},
     {memory_list, t(fun() -> [K || {K, V} <- erpc:call(N, erlang, memory, [[total, processes]]), is_integer(V)] end)},
     {memory_bad, t(fun() -> erpc:call(N, erlang, memory, [bad]) end)},
     {halt_bad, t(fun() -> erpc:call(N, erlang, halt, [bad]) end)},
     {apply3, t(fun() -> erpc:call(N, erlang, apply, [rexpeer, add, [1, 2]]) end)},
     {apply3_unknown, t(fun() -> erpc:call(N, erlang, apply, [nosuchmod, f, []]) end)},
     {apply_export, t(fun() -> erpc:call(N, erlang, apply, [fun rexpeer:add/2, [1, 2]]) end)},
     {apply_export_bif, t(fun() -> erpc:call(N, fun erlang:node/0) end)},
     {apply_export_missing, t(fun() -> erpc:call(N, fun rexfun:f/0) end)},
     {apply_notfun, t(fun() -> erpc:call(N, erlang, apply, [notafun, []]) end)},
     {fun_erpc, t(fun() -> erpc:call(N, Fun) end)},
     {fun_arity, t(fun() -> erpc:call(N, erlang, apply, [Fun, [x]]) end)},
     {fun_rpc, rpc:call(N, erlang, apply, [Fun, []])},
     {fun_block, rpc:block_call(N, erlang, apply, [Fun, []])},
     {fun_multicall, rpc:multicall([N], erlang, apply, [Fun, []])},
     {fun_yield, rpc:yield(rpc:async_call(N, erlang, apply, [Fun, []]))},
     {fun_cast, rpc:cast(N, erlang, apply, [Fun, []])},
     {still_up, t(fun() -> erpc:call(N, erlang, node, []) end)}
    ],
    norm(N, R).

%% What only a Colony node can be asked (an Erlang node would halt), and
%% what it answers differently.
colony_only(N) ->
    norm(N, [t(fun() -> erpc:call(N, erlang, halt, []) end),
             rpc:call(N, erlang, halt, [0]),
             t(fun() -> erpc:call(N, erlang, system_info, [version]) end),
             t(fun() -> erpc:call(N, colony, anyarity, [1]) end),
             t(fun() -> erpc:call(N, colony, anyarity, [1, 2, 3]) end),
             t(fun() -> erpc:call(N, erlang, node, []) end)]).
`

// rexFunModule makes funs of a module that only the calling node has.
const rexFunModule = `-module(rexfun).
-export([f/0]).
f() -> fun() -> node() end.
`

// registerRexPeer registers on n what rexpeer defines on an Erlang node.
func registerRexPeer(t *testing.T, n *testNode) {
	t.Helper()
	for name, f := range map[string]dist.RPCFunc{
		"rexpeer:add/2": func(_ *actor.Context, args []any) (any, error) {
			a, ok1 := args[0].(int)
			b, ok2 := args[1].(int)
			if !ok1 || !ok2 {
				return nil, errors.New("add takes two integers")
			}
			return a + b, nil
		},
		"rexpeer:fails/0": func(*actor.Context, []any) (any, error) {
			return nil, errors.New("rexpeer: failed on purpose")
		},
		"rexpeer:note/1": func(c *actor.Context, args []any) (any, error) {
			return actor.Atom("ok"), c.Send(args[0].(actor.Pid), actor.Atom("noted"))
		},
		"rexpeer:slow/1": func(c *actor.Context, args []any) (any, error) {
			ms, _ := args[0].(int)
			return actor.Atom("ok"), c.Sleep(time.Duration(ms) * time.Millisecond)
		},
		"rexpeer:selfkill/0": func(c *actor.Context, _ []any) (any, error) {
			return actor.Atom("true"), c.Exit(c.Self(), actor.Kill)
		},
		"anyarity": func(_ *actor.Context, args []any) (any, error) { return len(args), nil },
	} {
		if err := n.RegisterRPC(name, f); err != nil {
			t.Fatalf("RegisterRPC(%q): %v", name, err)
		}
	}
}

// rexPeers starts a Colony node with rexpeer's functions registered, an
// Erlang node e1 with rexpeer and rexfun, and an Erlang node e2 with
// rexpeer only.
func rexPeers(t *testing.T) (n *testNode, e1, e2 *erltest.Node) {
	t.Helper()
	erltest.Need(t, "erl", "erlc", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	peer := erltest.Compile(t, "rexpeer", rexPeerModule)
	funs := erltest.Compile(t, "rexfun", rexFunModule)
	n = startNode(t, port, dist.Config{Cookie: ck})
	registerRexPeer(t, n)
	e1 = erltest.Erl(t, port, erlName(), ck, "-pa", peer, "-pa", funs)
	e2 = erltest.Erl(t, port, erlName(), ck, "-pa", peer)
	return n, e1, e2
}

// Every way an Erlang node calls another, of functions that exist, that do
// not, of a wrong arity, of BIFs and of funs, gives the same answer from a
// Colony node as from an Erlang node (rexpeer:scenario/1).
func TestErlangRpcOnColonyAsOnErlang(t *testing.T) {
	n, e1, e2 := rexPeers(t)
	want := e1.Eval("rexpeer:scenario(" + atomLit(actor.Atom(e2.Name)) + ").")
	got := e1.Eval("rexpeer:scenario(" + atomLit(n.Name()) + ").")
	if got != want {
		t.Errorf("Erlang -> Colony differs from Erlang -> Erlang:\n%s", diffItems(got, want))
	}
	if want != rexReference {
		t.Errorf("the Erlang reference changed:\n%s", diffItems(want, rexReference))
	}
}

// What only a Colony node is asked: halt is refused (notsup) and the node
// stays up; version, an emulator's, is badarg; a name registered without
// arity takes every arity.
func TestErlangRpcColonyOnly(t *testing.T) {
	n, e1, _ := rexPeers(t)
	got := e1.Eval("rexpeer:colony_only(" + atomLit(n.Name()) + ").")
	const want = `[{caught,error,{exception,notsup,[{erlang,halt,[],[]}]}},` +
		`{badrpc,{'EXIT',{notsup,[{erlang,halt,[0],[]}]}}},` +
		`{caught,error,{exception,badarg,[{erlang,system_info,[version],[{error_info,#{module => erl_erts_errors}}]}]}},` +
		`1,3,target]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !n.logs.has("asked this node to halt") {
		t.Errorf("the refused halt was not logged")
	}
}

// diffItems shows the top-level items of two printed scenario results
// that differ.
func diffItems(got, want string) string {
	g, w := splitItems(got), splitItems(want)
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var x, y string
		if i < len(g) {
			x = g[i]
		}
		if i < len(w) {
			y = w[i]
		}
		if x != y {
			b.WriteString("  got  " + x + "\n  want " + y + "\n")
		}
	}
	if b.Len() == 0 {
		return "  got  " + got + "\n  want " + want
	}
	return b.String()
}

// splitItems splits "[{a,..},{b,..}]" at its top-level commas.
func splitItems(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var items []string
	depth, start := 0, 0
	inStr := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' && (i == 0 || s[i-1] != '\\'):
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case c == ',' && depth == 0:
			items = append(items, s[start:i])
			start = i + 1
		}
	}
	return append(items, s[start:])
}

// rexReference is the scenario between two Erlang nodes of OTP 25, item
// by item.
var rexReference = "[" + strings.Join([]string{
	`{erpc_add,3}`,
	`{erpc_wrong_arity,{caught,error,{exception,undef,[{rexpeer,add,[1],[]}]}}}`,
	`{erpc_unknown,{caught,error,{exception,undef,[{nosuchmod,f,[1],[]}]}}}`,
	`{erpc_fails,{caught,error,{exception,<<"rexpeer: failed on purpose">>,stack}}}`,
	`{erpc_killed,{caught,exit,{signal,killed}}}`,
	`{rpc_add,3}`,
	`{rpc_wrong_arity,{badrpc,{'EXIT',{undef,[{rexpeer,add,[1],[]}]}}}}`,
	`{rpc_unknown,{badrpc,{'EXIT',{undef,[{nosuchmod,f,[1],[]}]}}}}`,
	`{rpc_fails,{badrpc,{'EXIT',{<<"rexpeer: failed on purpose">>,stack}}}}`,
	`{rpc_timeout,{badrpc,timeout}}`,
	`{block_add,3}`,
	`{block_wrong_arity,{badrpc,{'EXIT',{undef,[{rexpeer,add,[1],[]}]}}}}`,
	`{block_unknown,{badrpc,{'EXIT',{undef,[{nosuchmod,f,[1],[]}]}}}}`,
	`{block_fails,{badrpc,{'EXIT',{<<"rexpeer: failed on purpose">>,stack}}}}`,
	`{block_with_timeout,3}`,
	`{block_bif,target}`,
	`{block_serial,{[ok,ok],true}}`,
	`{multicall,{[3,3],[]}}`,
	`{multicall_bad,{[{badrpc,{'EXIT',{undef,[{nosuchmod,f,[],[]}]}}}],['nosuchnode@127.0.0.1']}}`,
	`{multicall_arity,{[{badrpc,{'EXIT',{undef,[{rexpeer,add,[1],[]}]}}}],[]}}`,
	`{yield,3}`,
	`{yield_unknown,{badrpc,{'EXIT',{undef,[{nosuchmod,f,[1],[]}]}}}}`,
	`{yield_arity,{badrpc,{'EXIT',{undef,[{rexpeer,add,[1],[]}]}}}}`,
	`{nb_yield,{value,3}}`,
	`{cast,true,noted}`,
	`{erpc_cast,ok,noted}`,
	`{rex_cast,ok,noted}`,
	`{rex_call,3}`,
	`{rex_call_unknown,{badrpc,{'EXIT',{undef,[{nosuchmod,f,[1],[]}]}}}}`,
	`{rex_call_killed,{badrpc,{'EXIT',killed}}}`,
	`{rex_cnode_call,3}`,
	`{rex_features,[erpc]}`,
	`{rex_send,{nonexisting_name,nobody_here}}`,
	`{sbcast,{[target],[]}}`,
	`{sbcast_nobody,{[],[target]}}`,
	`{rex_ignores,{'EXIT',{timeout,{gen_server,call,[{rex,target},not_rpc,300]}}}}`,
	`{node,target}`,
	`{node_rpc,target}`,
	`{node_arity,{caught,error,{exception,undef,[{erlang,node,[1,2],[]}]}}}`,
	`{nodes,{true,false}}`,
	`{nodes_this,[target]}`,
	`{nodes_known,{true,true}}`,
	`{nodes_bad,{caught,error,{exception,badarg,[{erlang,nodes,[bad],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{is_alive,true}`,
	`{whereis,target_pid}`,
	`{whereis_none,undefined}`,
	`{whereis_bad,{caught,error,{exception,badarg,[{erlang,whereis,[1],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{registered,true}`,
	`{alive,true}`,
	`{alive_remote,{caught,error,{exception,badarg,[{erlang,is_process_alive,[my_pid],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{processes,{true,true}}`,
	`{otp_release,"25"}`,
	`{system_info,[{process_count,true},{schedulers,true},{schedulers_online,true},{logical_processors,true},{wordsize,true}]}`,
	`{system_version,true}`,
	`{system_info_bad,{caught,error,{exception,badarg,[{erlang,system_info,[nosuchkey],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{statistics,[{runtime,true},{wall_clock,true}]}`,
	`{run_queue,true}`,
	`{statistics_bad,{caught,error,{exception,badarg,[{erlang,statistics,[bad],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{memory,{[total,processes,processes_used,system,atom,atom_used,binary,code,ets],true,true}}`,
	`{memory_total,true}`,
	`{memory_list,[total,processes]}`,
	`{memory_bad,{caught,error,{exception,badarg,[{erlang,memory,[bad],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{halt_bad,{caught,error,{exception,badarg,[{erlang,halt,[bad],[{error_info,#{module => erl_erts_errors}}]}]}}}`,
	`{apply3,3}`,
	`{apply3_unknown,{caught,error,{exception,undef,[{nosuchmod,f,[],[]},{erlang,apply,3,[]}]}}}`,
	`{apply_export,3}`,
	`{apply_export_bif,target}`,
	`{apply_export_missing,{caught,error,{exception,undef,[{rexfun,f,[],[]},{erlang,apply,2,[]}]}}}`,
	`{apply_notfun,{caught,error,{exception,{badfun,notafun},[{erlang,apply,2,[]}]}}}`,
	`{fun_erpc,{caught,error,{exception,undef,[{{'fun',rexfun},[],[]},{erlang,apply,2,[]}]}}}`,
	`{fun_arity,{caught,error,{exception,{badarity,{{'fun',rexfun},[x]}},[{erlang,apply,2,[]}]}}}`,
	`{fun_rpc,{badrpc,{'EXIT',{undef,[{{'fun',rexfun},[],[]},{erlang,apply,2,[]}]}}}}`,
	`{fun_block,{badrpc,{'EXIT',{undef,[{{'fun',rexfun},[],[]},{erlang,apply,2,[]}]}}}}`,
	`{fun_multicall,{[{badrpc,{'EXIT',{undef,[{{'fun',rexfun},[],[]},{erlang,apply,2,[]}]}}}],[]}}`,
	`{fun_yield,{badrpc,{'EXIT',{undef,[{{'fun',rexfun},[],[]},{erlang,apply,2,[]}]}}}}`,
	`{fun_cast,true}`,
	`{still_up,target}`,
}, ",") + "]"

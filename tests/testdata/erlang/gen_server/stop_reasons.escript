#!/usr/bin/env escript
%% stop_reasons: {stop, R, Reply, S} replies and then terminates with R; a cast {stop, R, S} terminates with R; normal does not kill a linked non-trapping peer, boom and {shutdown, x} do.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    A = start_srv(a, #{}),
    P = spawn_loop(p),
    true = call(P, fun() -> link(A) end),
    Ma = mon(A),
    gen_call(A, {stop, normal, bye}),
    await_gs(A),
    await_down(Ma),
    %% There is no order between a's exit signal to p and main's call to p,
    %% so wait until p's link to a is gone: then p has handled the signal.
    wait_unlinked(P),
    alive(P),
    B = start_srv(b, #{}),
    Q = spawn_loop(q),
    true = call(Q, fun() -> link(B) end),
    Mb = mon(B),
    Mq = mon(Q),
    gen_call(B, {stop, boom, bye}),
    await_gs(B),
    await_down(Mb),
    await_down(Mq),
    C = start_srv(c, #{}),
    R = spawn_loop(r),
    true = call(R, fun() -> link(C) end),
    Mc = mon(C),
    Mr = mon(R),
    ok = gen_server:cast(C, {stop, {shutdown, x}}),
    await_gs(C),
    await_down(Mc),
    await_down(Mr),
    mailbox().

wait_unlinked(P) ->
    case call(P, fun() -> element(2, process_info(self(), links)) end) of
        [] -> ok;
        _ -> receive after 1 -> wait_unlinked(P) end
    end.

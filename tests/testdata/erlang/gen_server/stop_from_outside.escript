#!/usr/bin/env escript
%% stop_from_outside: gen_server:stop(Srv, Reason, Timeout) runs terminate with Reason whether or not the server traps exits, waits for its exit and returns ok (normal, boom, {shutdown,x}); a dead server gives noproc; a server busy in a callback makes the stop time out, keeps running, and stops with the reason once it takes the request.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

stop(Srv, Name, R, T) ->
    ev([stop, Name, R, try_(fun() -> gen_server:stop(Srv, R, T) end)]).

main(_) ->
    start_trace(),
    A = start_srv(a, #{}),
    Ma = mon(A),
    stop(A, a, boom, 5000),
    await_gs(A),
    await_down(Ma),
    B = start_srv(b, #{trap => true}),
    Mb = mon(B),
    stop(B, b, normal, infinity),
    await_gs(B),
    await_down(Mb),
    C = start_srv(c, #{}),
    Mc = mon(C),
    stop(C, c, {shutdown, x}, 5000),
    await_gs(C),
    await_down(Mc),
    stop(A, a, normal, 5000),
    D = start_srv(d, #{}),
    Md = mon(D),
    Q = spawn_loop(q),
    Main = self(),
    cast(Q, fun() -> gen_server:call(D, {cont, Main, [c1]}) end),
    receive {holding, D} -> ok end,
    stop(D, d, normal, 100),
    D ! go,
    await_gs(D),
    await_gs(D),
    await_down(Md),
    mailbox().

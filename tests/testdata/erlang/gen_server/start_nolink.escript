#!/usr/bin/env escript
%% start_nolink: a server started with gen_server:start by a process has no link to it and no parent: when that process exits with boom, a trapping server gets no 'EXIT' and runs no terminate, a non-trapping one survives, and both still answer calls; servers started with start_link by a process that exits with boom die with it (the trapping one through terminate).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    S1 = call(A, fun() -> start_srv(s1, #{trap => true}) end),
    S2 = call(A, fun() -> start_srv(s2, #{}) end),
    ev([links, S1, element(2, process_info(S1, links))]),
    ev([links, S2, element(2, process_info(S2, links))]),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    gen_call(S1, ping),
    gen_call(S2, ping),
    B = spawn_loop(b),
    {ok, S3} = call(B, fun() -> start(start_link, s3, #{trap => true}, []) end),
    {ok, S4} = call(B, fun() -> start(start_link, s4, #{}, []) end),
    M3 = mon(S3),
    M4 = mon(S4),
    Mb = mon(B),
    cast(B, fun() -> exit(boom) end),
    await_down(Mb),
    await_gs(S3),
    await_down(M3),
    await_down(M4),
    gen_call(S3, ping),
    [begin
         M = mon(S),
         ok = gen_server:cast(S, {stop, normal}),
         await_gs(S),
         await_down(M)
     end || S <- [S1, S2]],
    mailbox().

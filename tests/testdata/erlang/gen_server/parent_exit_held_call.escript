#!/usr/bin/env escript
%% parent_exit_held_call: a server holding a call (noreply) from another process is told to stop by its parent (the start_link caller) with exit(S, shutdown): a trapping server runs terminate with shutdown and a non-trapping one dies at once; either way the held call exits its caller with shutdown, and the parent gets the server's 'EXIT'.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    A = start_link_srv(a, #{trap => true}),
    K = spawn_loop(k),
    held_call(K, A),
    true = exit(A, shutdown),
    await_gs(A),
    await_result(K),
    await_exit(A),
    B = start_link_srv(b, #{}),
    held_call(K, B),
    true = exit(B, shutdown),
    await_result(K),
    await_exit(B),
    mailbox().

%% held_call(K, Srv) makes K call Srv with a request the server holds, and
%% waits until the server holds it. K sends main the call's result.
held_call(K, Srv) ->
    Main = self(),
    cast(K, fun() ->
        R = try gen_server:call(Srv, {hold_notify, Main})
            catch exit:{Reason, {gen_server, call, _}} -> {exit, Reason}
            end,
        Main ! {result, K, R}
    end),
    receive {holding, Srv} -> ok end.

%% await_result(K) prints "gen_call <k> <result>" for K's call.
await_result(K) ->
    receive {result, K, R} -> ev([gen_call, K, R]) end.

#!/usr/bin/env escript
%% no_restart_siblings: under one_for_all and rest_for_one, a child that is not restarted (temporary with any reason, transient with normal or shutdown) leaves its siblings running.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    lists:foreach(fun run/1, [one_for_all, rest_for_one]),
    mailbox().

run(Strategy) ->
    ev([strategy, Strategy]),
    Sup = start_sup(sup, #{strategy => Strategy, intensity => 1, period => 3600},
                    [worker(w1), worker(p2, temporary), worker(p3, temporary),
                     worker(t4, transient), worker(t5, transient), worker(w6)]),
    Ws = [w1, p2, p3, t4, t5, w6],
    [await_start(W) || W <- Ws],
    Pids = [pid(W) || W <- Ws],
    crash(p2, boom),
    await_child(Sup, p2, absent),
    crash(p3, normal),
    await_child(Sup, p3, absent),
    crash(t4, normal),
    await_child(Sup, t4, undefined),
    crash(t5, shutdown),
    await_child(Sup, t5, undefined),
    ev([same_pids, [W || {W, P} <- lists:zip(Ws, Pids), pid(W) =:= P]]),
    children(Sup),
    counts(Sup),
    stop_sup(Sup).

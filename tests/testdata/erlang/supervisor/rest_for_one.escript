#!/usr/bin/env escript
%% rest_for_one: a crashed child takes down the children started after it; they restart in start order; a crash of the last child restarts only it.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => rest_for_one, intensity => 5, period => 3600},
                    [worker(w1), worker(w2), worker(w3), worker(w4)]),
    [await_start(W) || W <- [w1, w2, w3, w4]],
    crash(w2, boom),
    [await_start(W) || W <- [w2, w3, w4]],
    crash(w4, boom),
    await_start(w4),
    crash(w1, boom),
    [await_start(W) || W <- [w1, w2, w3, w4]],
    children(Sup),
    stop_sup(Sup),
    mailbox().

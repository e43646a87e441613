#!/usr/bin/env escript
%% one_for_all: a crashed child takes all its siblings down (reverse start order, reason shutdown); all restart in start order.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_all, intensity => 3, period => 3600},
                    [worker(w1), worker(w2), worker(w3)]),
    [await_start(W) || W <- [w1, w2, w3]],
    crash(w2, boom),
    [await_start(W) || W <- [w1, w2, w3]],
    children(Sup),
    stop_sup(Sup),
    mailbox().

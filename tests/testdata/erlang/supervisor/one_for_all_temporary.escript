#!/usr/bin/env escript
%% one_for_all_temporary: a temporary child taken down by a sibling's crash under one_for_all is not restarted; a transient one is.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_all, intensity => 3, period => 3600},
                    [worker(w1), worker(p2, temporary), worker(t3, transient)]),
    [await_start(W) || W <- [w1, p2, t3]],
    crash(w1, boom),
    [await_start(W) || W <- [w1, t3]],
    children(Sup),
    stop_sup(Sup),
    mailbox().

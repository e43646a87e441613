#!/usr/bin/env escript
%% permanent: a permanent child is restarted after any exit, normal and shutdown included.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 5, period => 3600},
                    [worker(w1), worker(w2)]),
    [await_start(W) || W <- [w1, w2]],
    crash(w1, normal),
    await_start(w1),
    crash(w1, shutdown),
    await_start(w1),
    crash(w1, {shutdown, x}),
    await_start(w1),
    crash(w2, boom),
    await_start(w2),
    children(Sup),
    stop_sup(Sup),
    mailbox().

#!/usr/bin/env escript
%% intensity_exceeded: intensity 2 allows two restarts in the period; the third crash makes the supervisor stop its other children and exit with reason shutdown.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 2, period => 3600},
                    [worker(w1), worker(w2)]),
    [await_start(W) || W <- [w1, w2]],
    M = mon(Sup),
    crash(w1, boom),
    await_start(w1),
    crash(w1, boom),
    await_start(w1),
    crash(w1, boom),
    await_down(M),
    await_exit(Sup),
    mailbox().

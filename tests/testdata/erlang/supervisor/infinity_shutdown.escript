#!/usr/bin/env escript
%% infinity_shutdown: with shutdown infinity the supervisor waits for as long as the child's terminate takes.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1),
                     (worker(w2, permanent, #{stall => release}))#{shutdown => infinity}]),
    [await_start(W) || W <- [w1, w2]],
    M = mon(Sup),
    true = exit(Sup, shutdown),
    await_stalling(w2),
    %% Longer than any default shutdown timeout would matter here: the
    %% supervisor is still waiting.
    receive after 200 -> ok end,
    alive(Sup),
    alive(pid(w1)),
    pid(w2) ! release,
    await_down(M),
    await_exit(Sup),
    mailbox().

#!/usr/bin/env escript
%% brutal_kill_vs_timeout: brutal_kill kills at once (no terminate); a trapping child whose terminate stalls is killed when its shutdown timeout runs out; a prompt one stops with shutdown.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [(worker(w1))#{shutdown => brutal_kill},
                     (worker(w2, permanent, #{stall => forever}))#{shutdown => 100},
                     (worker(w3))#{shutdown => 5000}]),
    [await_start(W) || W <- [w1, w2, w3]],
    Ms = [mon(pid(W)) || W <- [w1, w2, w3]],
    stop_sup(Sup),
    await_stalling(w2),
    %% DOWNs from different processes: take them in a set order.
    [await_down(M) || M <- Ms],
    mailbox().

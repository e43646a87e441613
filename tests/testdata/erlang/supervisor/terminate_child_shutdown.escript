#!/usr/bin/env escript
%% terminate_child_shutdown: terminate_child follows the child's shutdown: a terminate that stalls past a 100 ms timeout is killed (DOWN killed), brutal_kill kills at once with no terminate; both return ok and the children can be restarted.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1),
                     (worker(w2, permanent, #{stall => forever}))#{shutdown => 100},
                     (worker(w3))#{shutdown => brutal_kill}]),
    [await_start(W) || W <- [w1, w2, w3]],
    M2 = mon(pid(w2)),
    ev([terminate_child, w2, supervisor:terminate_child(Sup, w2)]),
    await_stalling(w2),
    await_down(M2),
    M3 = mon(pid(w3)),
    ev([terminate_child, w3, supervisor:terminate_child(Sup, w3)]),
    await_down(M3),
    children(Sup),
    R3 = supervisor:restart_child(Sup, w3),
    await_start(w3),
    ev([restart_child, w3, R3]),
    children(Sup),
    stop_sup(Sup),
    mailbox().

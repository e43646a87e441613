#!/usr/bin/env escript
%% significant_terminate: auto_shutdown reacts only to a significant child ending by itself: terminate_child of it, or its stop and restart when a sibling crashes under one_for_all, leave the supervisor running; its own normal exit then shuts the supervisor down.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_all, intensity => 3, period => 3600,
                           auto_shutdown => any_significant},
                    [worker(w1), (worker(s2, transient))#{significant => true}, worker(w3)]),
    [await_start(W) || W <- [w1, s2, w3]],
    ev([terminate_child, s2, supervisor:terminate_child(Sup, s2)]),
    children(Sup),
    R = supervisor:restart_child(Sup, s2),
    await_start(s2),
    ev([restart_child, s2, R]),
    crash(w3, boom),
    [await_start(W) || W <- [w1, s2, w3]],
    children(Sup),
    M = mon(Sup),
    crash(s2, normal),
    await_down(M),
    await_exit(Sup),
    mailbox().

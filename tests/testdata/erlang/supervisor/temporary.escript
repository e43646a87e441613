#!/usr/bin/env escript
%% temporary: a temporary child is never restarted, whatever the reason, and is removed from the child list.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 5, period => 3600},
                    [worker(p1, temporary), worker(p2, temporary), worker(w3)]),
    [await_start(W) || W <- [p1, p2, w3]],
    crash(p1, boom),
    await_child(Sup, p1, absent),
    crash(p2, normal),
    await_child(Sup, p2, absent),
    children(Sup),
    counts(Sup),
    ev([restart_child, p1, supervisor:restart_child(Sup, p1)]),
    stop_sup(Sup),
    mailbox().

#!/usr/bin/env escript
%% terminate_restart_delete: terminate_child, restart_child and delete_child on a static supervisor, with their error results.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1), worker(w2), worker(w3)]),
    [await_start(W) || W <- [w1, w2, w3]],
    ev([terminate_child, w2, supervisor:terminate_child(Sup, w2)]),
    children(Sup),
    ev([terminate_child, w2, supervisor:terminate_child(Sup, w2)]),
    R = supervisor:restart_child(Sup, w2),
    await_start(w2),
    ev([restart_child, w2, R]),
    ev([restart_child, w2, supervisor:restart_child(Sup, w2)]),
    ev([delete_child, w2, supervisor:delete_child(Sup, w2)]),
    ev([terminate_child, w2, supervisor:terminate_child(Sup, w2)]),
    ev([delete_child, w2, supervisor:delete_child(Sup, w2)]),
    ev([delete_child, w2, supervisor:delete_child(Sup, w2)]),
    ev([restart_child, w2, supervisor:restart_child(Sup, w2)]),
    ev([terminate_child, nope, supervisor:terminate_child(Sup, nope)]),
    ev([terminate_child, w3, supervisor:terminate_child(Sup, pid(w3))]),
    children(Sup),
    stop_sup(Sup),
    mailbox().

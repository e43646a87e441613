#!/usr/bin/env escript
%% restart_child_results: restart_child of an ignored child is {ok, undefined}; of a child whose init fails {error, Reason} (unwrapped, unlike start_child) and it stays stopped; a terminated temporary child is gone; terminate_child by pid of a child added with start_child is not_found.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1), worker(w2, permanent, #{init => ignore}),
                     worker(w3, permanent, #{init => switch})]),
    [await_start(W) || W <- [w1, w3]],
    ev([restart_child, w2, supervisor:restart_child(Sup, w2)]),
    switch(w3, {stop, boom}),
    ev([terminate_child, w3, supervisor:terminate_child(Sup, w3)]),
    ev([restart_child, w3, supervisor:restart_child(Sup, w3)]),
    children(Sup),
    switch(w3, ignore),
    ev([restart_child, w3, supervisor:restart_child(Sup, w3)]),
    switch(w3, ok),
    R3 = supervisor:restart_child(Sup, w3),
    await_start(w3),
    ev([restart_child, w3, R3]),
    R4 = supervisor:start_child(Sup, worker(t4, temporary)),
    await_start(t4),
    ev([start_child, t4, R4]),
    ev([terminate_child, t4, supervisor:terminate_child(Sup, t4)]),
    ev([restart_child, t4, supervisor:restart_child(Sup, t4)]),
    ev([delete_child, t4, supervisor:delete_child(Sup, t4)]),
    R5 = supervisor:start_child(Sup, worker(w5)),
    await_start(w5),
    ev([start_child, w5, R5]),
    ev([terminate_child, w5, supervisor:terminate_child(Sup, pid(w5))]),
    children(Sup),
    counts(Sup),
    stop_sup(Sup),
    mailbox().

#!/usr/bin/env escript
%% restart_retry: a child whose restart fails is retried (which_children says restarting, count_children counts it inactive); restart_child and delete_child answer {error, restarting}; terminate_child cancels the retries and leaves it stopped for restart_child.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    %% Every failed try counts against the intensity; the number of tries
    %% before terminate_child depends on timing, so allow plenty and print
    %% nothing per try.
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1000000, period => 3600},
                    [worker(w1), worker(w2, permanent, #{init => switch})]),
    [await_start(W) || W <- [w1, w2]],
    switch(w2, {stop, boom}),
    crash(w2, boom),
    await_child(Sup, w2, restarting),
    children(Sup),
    counts(Sup),
    ev([restart_child, w2, supervisor:restart_child(Sup, w2)]),
    ev([delete_child, w2, supervisor:delete_child(Sup, w2)]),
    ev([terminate_child, w2, supervisor:terminate_child(Sup, w2)]),
    children(Sup),
    counts(Sup),
    switch(w2, ok),
    R = supervisor:restart_child(Sup, w2),
    await_start(w2),
    ev([restart_child, w2, R]),
    children(Sup),
    stop_sup(Sup),
    mailbox().

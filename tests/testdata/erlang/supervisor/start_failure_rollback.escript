#!/usr/bin/env escript
%% start_failure_rollback: child 3 of 4 fails in init; children 1 and 2 are stopped in reverse order and start_link returns {error, {shutdown, {failed_to_start_child, w3, boom}}}.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
              [worker(w1), worker(w2), worker(w3, permanent, #{init => {stop, boom}}), worker(w4)]),
    [await_start(W) || W <- [w1, w2]],
    ev([alive_children, [is_process_alive(pid(W)) || W <- [w1, w2]]]).

#!/usr/bin/env escript
%% start_child_errors: start_child on a running supervisor: init stop, ignore, a taken id (running or stopped); the supervisor lives on.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1), worker(w2, permanent, #{init => ignore})]),
    await_start(w1),
    %% The error also holds the child spec (as a record): print only the reason.
    {error, {Why, _Spec}} = supervisor:start_child(Sup, worker(w3, permanent, #{init => {stop, boom}})),
    ev([start_child, w3, error, Why]),
    ev([start_child, w4, supervisor:start_child(Sup, worker(w4, permanent, #{init => ignore}))]),
    ev([start_child, w1, supervisor:start_child(Sup, worker(w1))]),
    ev([start_child, w2, supervisor:start_child(Sup, worker(w2))]),
    R5 = supervisor:start_child(Sup, worker(w5)),
    await_start(w5),
    ev([start_child, w5, R5]),
    children(Sup),
    counts(Sup),
    stop_sup(Sup),
    mailbox().

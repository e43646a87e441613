#!/usr/bin/env escript
%% rest_for_one_temporary: under rest_for_one, the children after a crashed one are stopped in reverse order; a temporary one among them is not restarted and is removed, a transient one is restarted; the children before it keep running.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => rest_for_one, intensity => 3, period => 3600},
                    [worker(w1), worker(w2), worker(p3, temporary),
                     worker(t4, transient), worker(w5)]),
    [await_start(W) || W <- [w1, w2, p3, t4, w5]],
    W1 = pid(w1),
    crash(w2, boom),
    [await_start(W) || W <- [w2, t4, w5]],
    ev([same_pid, w1, pid(w1) =:= W1]),
    children(Sup),
    counts(Sup),
    stop_sup(Sup),
    mailbox().

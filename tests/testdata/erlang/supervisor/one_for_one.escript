#!/usr/bin/env escript
%% one_for_one: a crashed permanent child is restarted alone; the others keep their pids.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 3, period => 3600},
                    [worker(w1), worker(w2), worker(w3)]),
    [await_start(W) || W <- [w1, w2, w3]],
    W1 = pid(w1), W2 = pid(w2), W3 = pid(w3),
    crash(w2, boom),
    await_start(w2),
    ev([same_pid, w1, pid(w1) =:= W1]),
    ev([same_pid, w2, pid(w2) =:= W2]),
    ev([same_pid, w3, pid(w3) =:= W3]),
    children(Sup),
    stop_sup(Sup),
    mailbox().

#!/usr/bin/env escript
%% nested_one_for_all: a child supervisor that gives up under a one_for_all parent makes the parent stop the siblings (reverse order) and restart all of them in start order, the child supervisor with its own children.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Strict = #{strategy => one_for_one, intensity => 0, period => 3600},
    Top = start_sup(top, #{strategy => one_for_all, intensity => 3, period => 3600},
                    [worker(w1), subsup(sub, Strict, [worker(a1), worker(a2)]), worker(w3)]),
    [await_start(W) || W <- [w1, a1, a2, w3]],
    M = mon(pid(sub)),
    crash(a1, boom),
    [await_start(W) || W <- [w1, a1, a2, w3]],
    await_down(M),
    children(Top),
    children(pid(sub)),
    counts(Top),
    stop_sup(Top),
    mailbox().

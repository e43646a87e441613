#!/usr/bin/env escript
%% shutdown_order: a supervisor stops its children in reverse start order, a child supervisor stopping its own children (again in reverse) before the next sibling.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sub = #{strategy => one_for_one, intensity => 1, period => 3600},
    Top = start_sup(top, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1), worker(w2),
                     subsup(sub, Sub, [worker(s1), worker(s2), worker(s3)]),
                     worker(w4)]),
    [await_start(W) || W <- [w1, w2, s1, s2, s3, w4]],
    stop_sup(Top),
    mailbox().

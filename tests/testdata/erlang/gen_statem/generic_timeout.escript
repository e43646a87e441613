#!/usr/bin/env escript
%% generic_timeout: named timeouts: update changes the message and keeps the time, cancel stops one, update of one not running fires at once after the queued events, names run independently and outlive state changes, a restart replaces.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {arm, [{gt, t1, 50, m1}, {gt, t2, 10000, m2},
                      {ne, internal, {go_b, [{next, b}, {update, {gt, t1}, m1b}, {cancel, {gt, t2}}]}}]}),
    await_sm(sm, 3),
    sm_cast(S, {upd2, [{update, {gt, t3}, m3}, {ne, internal, i}]}),
    await_sm(sm, 3),
    sm_cast(S, {two, [{gt, t4, 60, m4}, {gt, t5, 20, m5}, {gt, t4, 120, m4b}]}),
    await_sm(sm, 3),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

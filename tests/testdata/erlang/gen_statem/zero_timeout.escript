#!/usr/bin/env escript
%% zero_timeout: a zero timeout fires after the queued events and before the mailbox; an inserted event cancels a zero event timeout; zero timeouts fire in the order set; postponed events re-queued by a state change go first.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {z1, [{timeout, 0, tz1}]}),
    sm_cast(S, m1),
    await_sm(sm, 3),
    sm_cast(S, {z2, [{timeout, 0, tz2}, {state_timeout, 0, sz2}, {ne, internal, i}]}),
    sm_cast(S, m2),
    await_sm(sm, 4),
    sm_cast(S, {z3, [{gt, n1, 0, g1}, {state_timeout, 0, s3}, {timeout, 0, t3}]}),
    await_sm(sm, 3),
    sm_cast(S, {p, [{in, a, [postpone]}]}),
    sm_cast(S, {go_b, [{next, b}, {state_timeout, 0, sb}]}),
    sm_cast(S, m3),
    await_sm(sm, 5),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

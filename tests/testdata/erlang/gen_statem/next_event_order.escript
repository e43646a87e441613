#!/usr/bin/env escript
%% next_event_order: next_event inserts run first, in the order inserted, before the events a state change re-queues and before the mailbox; an inserted event can itself insert and postpone.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {p1, [{in, a, [postpone]}]}),
    sm_cast(S, {go, [{ne, internal, {i1, [{ne, internal, i1a}]}},
                     {ne, cast, i2},
                     {ne, info, {i3, [{in, b, [postpone]}]}},
                     {next, b}]}),
    sm_cast(S, m1),
    sm_cast(S, {go_c, [{next, c}, {ne, internal, i4}]}),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 13),
    await_down(M),
    mailbox().

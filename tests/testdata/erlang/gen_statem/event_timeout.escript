#!/usr/bin/env escript
%% event_timeout: the event timeout fires when no event comes; any event cancels it, an inserted one included; the last timeout action wins; infinity cancels.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {arm, [{timeout, 20, t1}]}),
    await_sm(sm, 2),
    sm_cast(S, {arm2, [{timeout, 20, t2}, {ne, internal, i}]}),
    sm_cast(S, {arm3, [{timeout, 10000, t3}]}),
    sm_cast(S, m),
    sm_cast(S, {arm4, [{timeout, 10000, t4}, {timeout, 20, t5}]}),
    await_sm(sm, 6),
    sm_cast(S, {arm6, [{timeout, 20, t6}, {timeout, infinity, t7}]}),
    sm_cast(S, {arm8, [{timeout, 10000, t8}, {ne, internal, {p, [postpone]}}]}),
    sm_cast(S, {arm9, [{timeout, 60, t9}]}),
    await_sm(sm, 5),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

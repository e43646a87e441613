#!/usr/bin/env escript
%% state_timeout: the state timeout survives other events and repeat_state, a state change cancels it, a new one restarts it, and one set with a state change runs in the new state.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {arm, [{state_timeout, 50, st1}, {ne, internal, i1}, {ne, internal, {i2, [repeat]}}]}),
    await_sm(sm, 4),
    sm_cast(S, {arm2, [{state_timeout, 50, st2}, {ne, internal, {i3, [{next, b}]}}]}),
    sm_cast(S, {arm3, [{state_timeout, 10000, st3}, {state_timeout, 150, st4}]}),
    await_sm(sm, 4),
    sm_cast(S, {go_c, [{next, c}, {state_timeout, 20, st5}]}),
    await_sm(sm, 2),
    sm_cast(S, {arm6, [{state_timeout, 10000, st6}, {cancel, state_timeout}]}),
    sm_cast(S, {arm7, [{state_timeout, 40, st7}]}),
    await_sm(sm, 3),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

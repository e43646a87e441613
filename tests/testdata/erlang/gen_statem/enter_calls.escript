#!/usr/bin/env escript
%% enter_calls: state enter calls: after init with the initial state as old, after a state change, again on repeat_state, not on keep_state or next_state to the same state; an enter call may keep its state and set a state timeout.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{enter => [{in, c, [{next, c}, {state_timeout, 0, in_c}]}]}),
    M = mon(S),
    await_sm(sm),
    sm_cast(S, {same, [{next, a}]}),
    sm_cast(S, {k, [keep]}),
    sm_cast(S, {r, [repeat]}),
    sm_cast(S, {go_b, [{next, b}]}),
    sm_cast(S, {go_c, [{next, c}]}),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 11),
    await_down(M),
    mailbox().

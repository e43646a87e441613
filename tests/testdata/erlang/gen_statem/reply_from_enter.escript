#!/usr/bin/env escript
%% reply_from_enter: an enter call answers a call held in the state before; a postponed call is answered in the state that takes it.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{enter => [{in, b, [{reply_held, entered_b}]}]}),
    M = mon(S),
    await_sm(sm),
    sm_call_async(S, {wait, [hold]}, 5000),
    await_sm(sm),
    sm_cast(S, {go_b, [{next, b}]}),
    await_sm(sm, 2),
    await_call(),
    sm_call_async(S, {later, [{in, b, [postpone]}, {in, c, [{reply, in_c}]}]}, 5000),
    await_sm(sm),
    sm_cast(S, {go_c, [{next, c}]}),
    await_sm(sm, 3),
    await_call(),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

#!/usr/bin/env escript
%% call_timeout: a call that times out while postponed leaves no stray reply when the machine answers it later.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_call(S, {slow, [{in, a, [postpone]}, {in, b, [{reply, late}]}]}, 50),
    await_sm(sm),
    sm_cast(S, {go_b, [{next, b}]}),
    await_sm(sm, 2),
    sm_call(S, {ping, [{reply, pong}]}, 5000),
    await_sm(sm),
    mailbox(),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

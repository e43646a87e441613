#!/usr/bin/env escript
%% functions_mode: state_functions mode with state enter: a function per state, enter calls per state, postponed events retried after the change.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{mode => state_functions, enter => [{in, c, [{state_timeout, 20, in_c}]}]}),
    M = mon(S),
    await_sm(sm),
    sm_cast(S, {e1, [{in, a, [postpone]}]}),
    sm_cast(S, {go_b, [{next, b}]}),
    sm_cast(S, {go_c, [{next, c}]}),
    await_sm(sm, 7),
    sm_call(S, {r, [repeat, {reply, ok}]}, 5000),
    await_sm(sm, 3),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

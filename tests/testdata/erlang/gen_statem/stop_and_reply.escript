#!/usr/bin/env escript
%% stop_and_reply: stop_and_reply sends the replies before terminate runs (terminate here waits for main, which gets the reply first); a stop without replies leaves the caller the exit.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{block_terminate => true}),
    M = mon(S),
    sm_call(S, {bye, [{reply, bye_reply}, {stop, normal}]}, 2000),
    S ! release,
    await_sm(sm, 2),
    await_down(M),
    S2 = start_sm(s2, #{}),
    M2 = mon(S2),
    sm_call(S2, {die, [{stop, boom}]}, 5000),
    await_sm(s2, 2),
    await_down(M2),
    S3 = start_sm(s3, #{enter => [{in, b, [{reply_held, from_enter}, {stop, {shutdown, bye}}]}]}),
    M3 = mon(S3),
    await_sm(s3),
    sm_call_async(S3, {wait, [hold]}, 5000),
    await_sm(s3),
    sm_cast(S3, {go_b, [{next, b}]}),
    await_sm(s3, 3),
    await_down(M3),
    await_call(),
    mailbox().

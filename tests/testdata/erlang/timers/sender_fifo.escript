#!/usr/bin/env escript
%% sender_fifo: two senders interleaved, 20 messages each: each sender's messages arrive in send order (only per-sender order is printed).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    Main = self(),
    Send = fun(Name) ->
        receive go -> ok end,
        [Main ! {Name, I} || I <- lists:seq(1, 20)]
    end,
    A = spawn_named(a, fun() -> Send(a) end),
    B = spawn_named(b, fun() -> Send(b) end),
    A ! go,
    B ! go,
    seqs([a, b], take(40)),
    settled_mailbox().

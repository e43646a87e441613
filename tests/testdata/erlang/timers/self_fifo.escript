#!/usr/bin/env escript
%% self_fifo: messages a process sends itself are received in send order, also when a timer message and a selective receive come between them.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    [self() ! {main, I} || I <- lists:seq(1, 5)],
    send_after(0, self(), tick),
    receive tick -> ev([recv, main, tick]) end,
    [self() ! {main, I} || I <- lists:seq(6, 10)],
    seqs([main], take(10)),
    settled_mailbox().

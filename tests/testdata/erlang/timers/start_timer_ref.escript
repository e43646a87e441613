#!/usr/bin/env escript
%% start_timer_ref: start_timer's message is {timeout, Ref, Msg} with the ref start_timer returned, to self or to another process, whatever Msg is, with a zero delay too; each timer has its own ref; send_after's message carries none. Once delivered, read_timer and cancel_timer say false.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    T1 = start_timer(20, self(), ping),
    recv(),
    read(T1, 20),
    cancel(T1, 20),
    A = spawn_loop(a),
    start_timer(20, A, hi),
    await_fwd(A),
    send_after(20, self(), plain),
    recv(),
    start_timer(0, self(), zero),
    recv(),
    %% Two timers with one message, 80 ms apart: each message names its own.
    start_timer(100, self(), {tick, [1, 2]}),
    start_timer(20, self(), {tick, [1, 2]}),
    recv(),
    recv(),
    settled_mailbox().

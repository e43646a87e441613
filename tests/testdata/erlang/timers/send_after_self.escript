#!/usr/bin/env escript
%% send_after_self: a send_after timer to self delivers its message once; after that read_timer and cancel_timer say false; a zero delay delivers too.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    T1 = send_after(20, self(), ping),
    recv(),
    read(T1, 20),
    cancel(T1, 20),
    T2 = send_after(0, self(), zero),
    recv(),
    read(T2, 0),
    settled_mailbox().

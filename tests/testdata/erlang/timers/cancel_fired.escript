#!/usr/bin/env escript
%% cancel_fired: once a timer's message is in the mailbox, read_timer and cancel_timer say false and the message stays there.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    T1 = send_after(10, self(), fired),
    await_mailbox(1),
    read(T1, 10),
    cancel(T1, 10),
    settled_mailbox().

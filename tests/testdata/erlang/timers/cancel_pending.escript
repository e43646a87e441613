#!/usr/bin/env escript
%% cancel_pending: cancel_timer of a pending timer returns the time left and its message never arrives; a second cancel_timer, and read_timer afterwards, say false.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    T1 = send_after(100, self(), cancelled),
    read(T1, 100),
    cancel(T1, 100),
    read(T1, 100),
    cancel(T1, 100),
    %% The marker's deadline is well after T1's: had T1 fired, its message
    %% would be in the mailbox before the marker.
    send_after(250, self(), marker),
    recv(),
    settled_mailbox().

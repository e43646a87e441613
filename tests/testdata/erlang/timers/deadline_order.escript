#!/usr/bin/env escript
%% deadline_order: timers armed longest first (200, 100, 20 ms) deliver in deadline order, not arming order.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    send_after(200, self(), late),
    send_after(100, self(), mid),
    send_after(20, self(), early),
    recv(),
    recv(),
    recv(),
    settled_mailbox().

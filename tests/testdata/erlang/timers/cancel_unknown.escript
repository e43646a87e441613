#!/usr/bin/env escript
%% cancel_unknown: cancel_timer and read_timer of a ref that never named a timer return false.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    R = make_ref(),
    ets:insert(colony_names, {R, t0}),
    cancel(R, 0),
    read(R, 0),
    settled_mailbox().

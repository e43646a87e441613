#!/usr/bin/env escript
%% msg_before_down: messages a sends before it dies reach the monitoring process before the DOWN, in send order.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    Main = self(),
    A = spawn_named(a, fun() ->
        receive go -> ok end,
        Main ! {msg, 1},
        Main ! {msg, 2},
        Main ! {msg, 3},
        exit(boom)
    end),
    _ = mon(A),
    A ! go,
    %% Plain receives: take the mailbox in arrival order.
    recv(),
    recv(),
    recv(),
    recv(),
    mailbox().

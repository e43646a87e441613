#!/usr/bin/env escript
%% msg_before_exit: a trapping process gets the messages a linked peer sent before dying, in send order, before the peer's 'EXIT'; likewise for messages sent before an exit/2 signal.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Main = self(),
    A = spawn_link_named(a, fun() ->
        receive go -> ok end,
        Main ! {a, 1},
        Main ! {a, 2},
        exit(boom)
    end),
    A ! go,
    recv(),
    recv(),
    recv(),
    B = spawn_named(b, fun() ->
        receive go -> ok end,
        Main ! {b, 1},
        exit(Main, boom),
        Main ! {b, 2}
    end),
    B ! go,
    recv(),
    recv(),
    recv(),
    settled_mailbox().

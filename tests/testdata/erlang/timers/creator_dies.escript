#!/usr/bin/env escript
%% creator_dies: a timer outlives the process that armed it (only the destination's death cancels a timer): it stays pending and delivers after its creator crashed.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    Main = self(),
    A = spawn_named(a, fun() ->
        receive go -> ok end,
        T = send_after(200, Main, from_a),
        Main ! {armed, T},
        exit(boom)
    end),
    Ma = mon(A),
    A ! go,
    T1 = receive {armed, T} -> T end,
    await_down(Ma),
    read(T1, 200),
    recv(),
    read(T1, 200),
    settled_mailbox().

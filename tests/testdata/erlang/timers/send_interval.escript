#!/usr/bin/env escript
%% send_interval: timer:send_interval/3 delivers its message again and again until timer:cancel/1; nothing comes after the cancel (the ticks already queued when it returned are flushed unprinted: how many there are is timing). An interval to another process goes on after its caller has died.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    Main = self(),
    {ok, T1} = timer:send_interval(50, Main, tick),
    recv(),
    recv(),
    recv(),
    {ok, cancel} = timer:cancel(T1),
    ev([cancelled, interval]),
    flush(tick),
    timer:sleep(150),
    settled_mailbox(),
    A = spawn_named(a, fun() ->
        receive go -> ok end,
        {ok, T} = timer:send_interval(50, Main, from_a),
        Main ! {armed, T},
        exit(boom)
    end),
    Ma = mon(A),
    A ! go,
    T2 = receive {armed, T} -> T end,
    await_down(Ma),
    recv(),
    recv(),
    {ok, cancel} = timer:cancel(T2),
    ev([cancelled, from_a]),
    flush(from_a),
    timer:sleep(150),
    settled_mailbox().

flush(M) -> receive M -> flush(M) after 0 -> ok end.

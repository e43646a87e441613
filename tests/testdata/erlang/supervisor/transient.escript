#!/usr/bin/env escript
%% transient: a transient child is restarted only after an abnormal exit; normal, shutdown and {shutdown, _} leave it stopped (pid undefined).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 5, period => 3600},
                    [worker(t1, transient), worker(t2, transient),
                     worker(t3, transient), worker(t4, transient)]),
    [await_start(W) || W <- [t1, t2, t3, t4]],
    crash(t1, normal),
    await_child(Sup, t1, undefined),
    crash(t2, shutdown),
    await_child(Sup, t2, undefined),
    crash(t3, {shutdown, x}),
    await_child(Sup, t3, undefined),
    crash(t4, boom),
    await_start(t4),
    children(Sup),
    counts(Sup),
    stop_sup(Sup),
    mailbox().

#!/usr/bin/env escript
%% nested_intensity: a child supervisor that exceeds its intensity dies with reason shutdown; its permanent parent restarts it, a transient one is left stopped (shutdown is not abnormal).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Strict = #{strategy => one_for_one, intensity => 0, period => 3600},
    Top = start_sup(top, #{strategy => one_for_one, intensity => 5, period => 3600},
                    [subsup(sub1, Strict, [worker(a1), worker(a2)]),
                     (subsup(sub2, Strict, [worker(b1)]))#{restart => transient},
                     worker(w3)]),
    [await_start(W) || W <- [a1, a2, b1, w3]],
    M1 = mon(pid(sub1)),
    crash(a1, boom),
    %% The restarted workers print "start" while main would print the DOWN:
    %% wait for the starts first, so the trace has one order.
    [await_start(W) || W <- [a1, a2]],
    await_down(M1),
    M2 = mon(pid(sub2)),
    crash(b1, boom),
    await_down(M2),
    await_child(Top, sub2, undefined),
    children(Top),
    children(pid(sub1)),
    stop_sup(Top),
    mailbox().

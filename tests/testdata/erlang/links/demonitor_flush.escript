#!/usr/bin/env escript
%% demonitor_flush: demonitor when the DOWN is already in the mailbox leaves it there; with flush it is removed; info says whether the monitor was still active.
-mode(compile).
-include("../colony_trace.hrl").

%% Each child exits on a go sent after the monitor: spawned to exit at once,
%% it could run first on another scheduler and give noproc.
main(_) ->
    start_trace(),
    A = spawn_named(a, fun() -> receive go -> exit(boom) end end),
    M1 = mon(A),
    A ! go,
    await_mailbox(1),
    ev([demonitor, M1, erlang:demonitor(M1)]),
    mailbox(),
    await_down(M1),
    B = spawn_named(b, fun() -> receive go -> exit(boom) end end),
    M2 = mon(B),
    B ! go,
    await_mailbox(1),
    ev([demonitor, M2, [flush], erlang:demonitor(M2, [flush])]),
    mailbox(),
    C = spawn_named(c, fun() -> receive go -> exit(boom) end end),
    M3 = mon(C),
    C ! go,
    await_mailbox(1),
    ev([demonitor, M3, [flush, info], erlang:demonitor(M3, [flush, info])]),
    mailbox(),
    D = spawn_loop(d),
    M4 = mon(D),
    ev([demonitor, M4, [info], erlang:demonitor(M4, [info])]),
    ev([demonitor, M4, [info], erlang:demonitor(M4, [info])]),
    ev([demonitor, M4, erlang:demonitor(M4)]),
    M5 = mon(D),
    cast(D, fun() -> exit(boom) end),
    await_down(M5),
    mailbox().

#!/usr/bin/env escript
%% monitor_dead: monitoring a dead pid gives DOWN noproc at once; each such monitor gets its own ref.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    M1 = mon(D),
    await_down(M1),
    M2 = mon(D),
    await_down(M2),
    mailbox().

#!/usr/bin/env escript
%% demonitor_queued_twice: demonitor of a monitor whose DOWN is queued leaves the DOWN; a second demonitor says false with [info] and true without, and leaves it too; [flush, info] then removes it and says false; likewise for the noproc DOWN of a monitor of a dead pid.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    M1 = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_mailbox(1),
    ev([demonitor, M1, erlang:demonitor(M1)]),
    ev([demonitor, M1, [info], erlang:demonitor(M1, [info])]),
    ev([demonitor, M1, erlang:demonitor(M1)]),
    mailbox(),
    ev([demonitor, M1, [flush, info], erlang:demonitor(M1, [flush, info])]),
    mailbox(),
    M2 = mon(A),
    await_mailbox(1),
    ev([demonitor, M2, [info], erlang:demonitor(M2, [info])]),
    mailbox(),
    ev([demonitor, M2, [flush], erlang:demonitor(M2, [flush])]),
    mailbox().

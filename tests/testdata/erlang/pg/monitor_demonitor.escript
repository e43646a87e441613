#!/usr/bin/env escript
%% monitor_demonitor: pg:demonitor/1 of a group monitor returns ok and flushes its notifications not yet taken from the caller's mailbox; after it no more come, while a second monitor of the same group goes on; demonitor again, or of a process monitor's ref, is false.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b),
    M1 = gmon(g),
    M2 = gmon(g),
    join(self(), g, A),
    join(self(), g, B),
    await_group(M1),
    gdemon(M1),
    gdemon(M1),
    join(self(), g, A),
    await_group(M2),
    await_group(M2),
    await_group(M2),
    Ma = mon(A),
    gdemon(Ma),
    members(g),
    mailbox().

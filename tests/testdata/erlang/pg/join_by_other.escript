#!/usr/bin/env escript
%% join_by_other: a membership belongs to the member, not to the process that called pg:join/2: it outlives that caller, and any process can make the member leave.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b), C = spawn_loop(c),
    join(B, g, A),
    join(B, g, B),
    members(g),
    Mb = mon(B),
    cast(B, fun() -> exit(boom) end),
    await_down(Mb),
    members(g),
    leave(C, g, A),
    members(g),
    mailbox().

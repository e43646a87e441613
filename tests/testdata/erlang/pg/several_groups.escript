#!/usr/bin/env escript
%% several_groups: one process in several groups: leaving one group keeps its joins in the others; it can join a group it left again; its death empties every group it was in and leaves the other members.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b),
    join(self(), g1, A),
    join(self(), g2, A),
    join(self(), g3, A),
    join(self(), g2, B),
    leave(self(), g2, A),
    members(g1),
    members(g2),
    members(g3),
    join(A, g2, A),
    members(g2),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    members(g1),
    members(g2),
    members(g3),
    mailbox().

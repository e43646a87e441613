#!/usr/bin/env escript
%% monitor_join_leave: pg:monitor/1 returns the group's members (one entry per join) and then sends one notification per join and per successful leave, made by any process; a leave that is not_joined and changes to other groups send nothing; a second monitor starts from the members of its moment; a group nobody joined can be monitored and is not listed by which_groups.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b), C = spawn_loop(c),
    join(self(), g, A),
    join(self(), g, A),
    M1 = gmon(g),
    join(self(), g, B),
    await_group(M1),
    join(C, g, C),
    await_group(M1),
    leave(self(), g, A),
    await_group(M1),
    leave(self(), h, A),
    leave(self(), g, self()),
    join(self(), h, A),
    leave(B, g, B),
    await_group(M1),
    M2 = gmon(g),
    join(self(), g, B),
    await_group(M1),
    await_group(M2),
    gmon(nobody),
    which_groups(),
    members(g),
    mailbox().

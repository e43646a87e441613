#!/usr/bin/env escript
%% monitor_member_dies: a member's death sends each monitor of a group one leave per join the member had there (a pid joined twice: two leaves), whatever the reason (killed, normal); monitors of its other groups get theirs; the group is gone from which_groups with its last member.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b),
    join(self(), g, A),
    join(self(), g, B),
    join(self(), g, A),
    join(self(), h, A),
    Mg = gmon(g),
    Mh = gmon(h),
    which_groups(),
    Ma = mon(A),
    exit(A, kill),
    await_down(Ma),
    await_group(Mg),
    await_group(Mg),
    await_group(Mh),
    members(g),
    which_groups(),
    Mb = mon(B),
    cast(B, fun() -> exit(normal) end),
    await_down(Mb),
    await_group(Mg),
    members(g),
    which_groups(),
    mailbox().

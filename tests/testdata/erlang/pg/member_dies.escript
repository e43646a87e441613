#!/usr/bin/env escript
%% member_dies: a member's death removes every join it had in every group, whatever its exit reason (boom, normal, killed); the other members stay, and a leave for the dead pid is not_joined.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b), C = spawn_loop(c),
    join(self(), g, A),
    join(self(), g, A),
    join(self(), h, A),
    join(self(), g, B),
    join(self(), g, C),
    join(self(), h, C),
    members(g),
    members(h),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    members(g),
    members(h),
    leave(self(), g, A),
    Mb = mon(B),
    cast(B, fun() -> exit(normal) end),
    await_down(Mb),
    members(g),
    Mc = mon(C),
    exit(C, kill),
    await_down(Mc),
    members(g),
    members(h),
    mailbox().

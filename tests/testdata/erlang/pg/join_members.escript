#!/usr/bin/env escript
%% join_members: pg:join/2 adds a member to a group, which exists from its first join; a process can join itself or be joined by another; a group nobody joined has no members.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b), C = spawn_loop(c),
    members(g),
    join(self(), g, A),
    members(g),
    join(self(), g, B),
    join(C, g, C),
    members(g),
    members(nobody),
    mailbox().

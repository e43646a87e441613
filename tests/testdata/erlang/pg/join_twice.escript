#!/usr/bin/env escript
%% join_twice: a process that joins a group twice is listed twice and must leave twice: each leave removes one join, and a leave with no join left is not_joined.
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
    members(g),
    leave(self(), g, A),
    members(g),
    leave(A, g, A),
    members(g),
    leave(self(), g, A),
    members(g),
    mailbox().

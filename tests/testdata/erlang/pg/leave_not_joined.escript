#!/usr/bin/env escript
%% leave_not_joined: pg:leave/2 of a pid with no join in the group returns not_joined and changes nothing: a group nobody joined, a pid that is a member of another group only, the caller itself.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b),
    leave(self(), g, A),
    join(self(), g, A),
    leave(self(), g, B),
    leave(self(), h, A),
    leave(self(), g, self()),
    members(g),
    leave(self(), g, A),
    leave(self(), g, A),
    members(g),
    mailbox().

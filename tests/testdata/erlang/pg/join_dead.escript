#!/usr/bin/env escript
%% join_dead: pg:join/2 of a dead pid returns ok, but pg's monitor of it fires at once and drops the entry: the group ends up without it, and a leave for it is not_joined (Colony's JoinGroup refuses a dead pid with ErrNoProc: docs/guarantees.md).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    join(self(), g, D),
    members(g),
    leave(self(), g, D),
    A = spawn_loop(a),
    join(self(), g, A),
    join(self(), g, D),
    members(g),
    mailbox().

#!/usr/bin/env escript
%% link_dead_nontrap: link/1 to a dead pid from a non-trapping process raises error noproc; the caller lives on.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    A = spawn_loop(a),
    ev([link, A, D, call(A, fun() -> link(D) end)]),
    ev([links, A, call(A, fun() -> element(2, process_info(self(), links)) end)]),
    alive(A),
    mailbox().

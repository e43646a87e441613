#!/usr/bin/env escript
%% link_dead_trap: link/1 to a dead pid from a trapping process returns true and delivers {'EXIT', Dead, noproc}.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    A = spawn_loop(a),
    false = call(A, fun() -> process_flag(trap_exit, true) end),
    ev([link, A, D, call(A, fun() -> link(D) end)]),
    await_fwd(A),
    ev([links, A, call(A, fun() -> element(2, process_info(self(), links)) end)]),
    alive(A),
    mailbox().

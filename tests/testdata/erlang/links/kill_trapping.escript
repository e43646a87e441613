#!/usr/bin/env escript
%% kill_trapping: exit(A, kill) kills a trapping process with reason killed; a trapping peer gets {'EXIT', a, killed}, a non-trapping peer dies with killed.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    C = spawn_loop(c),
    false = call(A, fun() -> process_flag(trap_exit, true) end),
    false = call(B, fun() -> process_flag(trap_exit, true) end),
    true = call(A, fun() -> link(B) end),
    true = call(A, fun() -> link(C) end),
    Ma = mon(A),
    Mc = mon(C),
    exit(A, kill),
    await_down(Ma),
    await_fwd(B),
    await_down(Mc),
    alive(B),
    mailbox().

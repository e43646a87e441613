#!/usr/bin/env escript
%% shutdown_tuple_reason: {shutdown, x} is an abnormal reason for links: it kills a linked non-trapping peer and reaches a trapping one as a message; exit(Pid, shutdown) kills a non-trapping process.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    C = spawn_loop(c),
    false = call(C, fun() -> process_flag(trap_exit, true) end),
    true = call(B, fun() -> link(A) end),
    true = call(B, fun() -> link(C) end),
    Ma = mon(A),
    Mb = mon(B),
    cast(B, fun() -> exit({shutdown, x}) end),
    await_down(Mb),
    await_down(Ma),
    await_fwd(C),
    alive(C),
    Mc = mon(C),
    D = spawn_loop(d),
    Md = mon(D),
    true = exit(D, shutdown),
    await_down(Md),
    true = exit(C, shutdown),
    await_fwd(C),
    true = exit(C, kill),
    await_down(Mc),
    mailbox().

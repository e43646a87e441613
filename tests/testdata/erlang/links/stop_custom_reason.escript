#!/usr/bin/env escript
%% stop_custom_reason: a process that exits with a tuple reason {custom,1} shows that exact term to its monitor, to a trapping linked peer (as an 'EXIT' message) and as the death of a non-trapping linked peer; exit(R, {shutdown,x}) from outside does the same for R.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a), P = spawn_loop(p), Q = spawn_loop(q),
    false = call(P, fun() -> process_flag(trap_exit, true) end),
    true = call(A, fun() -> link(P) end),
    true = call(A, fun() -> link(Q) end),
    Ma = mon(A),
    Mq = mon(Q),
    cast(A, fun() -> exit({custom, 1}) end),
    await_down(Ma),
    await_fwd(P),
    await_down(Mq),
    alive(P),
    R = spawn_loop(r),
    true = call(R, fun() -> link(P) end),
    Mr = mon(R),
    true = exit(R, {shutdown, x}),
    await_down(Mr),
    await_fwd(P),
    alive(P),
    mailbox().

#!/usr/bin/env escript
%% exit_self_normal: exit(self(), normal) kills a non-trapping caller with reason normal, but is an 'EXIT' message from itself to a trapping one.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    Ma = mon(A),
    cast(A, fun() -> exit(self(), normal) end),
    await_down(Ma),
    B = spawn_loop(b),
    false = call(B, fun() -> process_flag(trap_exit, true) end),
    cast(B, fun() -> exit(self(), normal) end),
    await_fwd(B),
    alive(B),
    C = spawn_loop(c),
    Mc = mon(C),
    cast(C, fun() -> exit(normal) end),
    await_down(Mc),
    mailbox().

#!/usr/bin/env escript
%% unlink_then_die: after unlink the peer's death sends nothing, to a trapping or a non-trapping process.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    A = spawn_loop(a),
    true = link(A),
    ev([unlink, main, A, unlink(A)]),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    B = spawn_loop(b),
    C = spawn_loop(c),
    true = call(B, fun() -> link(C) end),
    ev([unlink, B, C, call(B, fun() -> unlink(C) end)]),
    Mc = mon(C),
    cast(C, fun() -> exit(boom) end),
    await_down(Mc),
    alive(B),
    mailbox().

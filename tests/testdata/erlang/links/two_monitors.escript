#!/usr/bin/env escript
%% two_monitors: two monitors on one pid give exactly one DOWN each, with distinct refs.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    M1 = mon(A),
    M2 = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(M1),
    await_down(M2),
    mailbox().

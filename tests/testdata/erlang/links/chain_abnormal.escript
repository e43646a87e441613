#!/usr/bin/env escript
%% chain_abnormal: a-b-c linked in a chain; c exits with boom; a and b die with boom too.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    C = spawn_loop(c),
    true = call(A, fun() -> link(B) end),
    true = call(B, fun() -> link(C) end),
    Ma = mon(A),
    Mb = mon(B),
    Mc = mon(C),
    cast(C, fun() -> exit(boom) end),
    %% Selective receives: DOWNs from different processes have no order.
    await_down(Mc),
    await_down(Mb),
    await_down(Ma),
    mailbox().

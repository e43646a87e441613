#!/usr/bin/env escript
%% chain_mixed_trap: three-process chains with trapping and non-trapping links: a trapping middle stops an end's crash; a crash in the middle kills a non-trapping end and reaches a trapping one as a message; a kill in the middle reaches both trapping ends as killed.
-mode(compile).
-include("../colony_trace.hrl").

trap(P) -> false = call(P, fun() -> process_flag(trap_exit, true) end).
chain(X, Y, Z) ->
    true = call(X, fun() -> link(Y) end),
    true = call(Y, fun() -> link(Z) end).

main(_) ->
    start_trace(),
    A = spawn_loop(a), B = spawn_loop(b), C = spawn_loop(c),
    trap(B),
    chain(A, B, C),
    Mc = mon(C),
    cast(C, fun() -> exit(boom) end),
    await_down(Mc),
    await_fwd(B),
    alive(A),
    alive(B),
    D = spawn_loop(d), E = spawn_loop(e), F = spawn_loop(f),
    trap(D),
    chain(D, E, F),
    Me = mon(E),
    Mf = mon(F),
    cast(E, fun() -> exit(boom) end),
    await_down(Me),
    await_down(Mf),
    await_fwd(D),
    alive(D),
    G = spawn_loop(g), H = spawn_loop(h), I = spawn_loop(i),
    trap(G),
    trap(H),
    trap(I),
    chain(G, H, I),
    Mh = mon(H),
    true = exit(H, kill),
    await_down(Mh),
    await_fwd(G),
    await_fwd(I),
    alive(G),
    alive(I),
    mailbox().

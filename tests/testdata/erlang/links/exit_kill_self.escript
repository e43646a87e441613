#!/usr/bin/env escript
%% exit_kill_self: a process that exits with reason kill (exit(kill)) sends kill along its links as an ordinary, trappable reason: peers die with kill, not killed; exit(self(), kill) is untrappable and gives killed.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    K = spawn_loop(k),
    Q = spawn_loop(q),
    R = spawn_loop(r),
    false = call(Q, fun() -> process_flag(trap_exit, true) end),
    true = call(K, fun() -> link(Q) end),
    true = call(K, fun() -> link(R) end),
    Mk = mon(K),
    Mr = mon(R),
    cast(K, fun() -> exit(kill) end),
    await_down(Mk),
    await_fwd(Q),
    await_down(Mr),
    alive(Q),
    S = spawn_loop(s),
    T = spawn_loop(t),
    false = call(S, fun() -> process_flag(trap_exit, true) end),
    false = call(T, fun() -> process_flag(trap_exit, true) end),
    true = call(S, fun() -> link(T) end),
    Ms = mon(S),
    cast(S, fun() -> exit(self(), kill) end),
    await_down(Ms),
    await_fwd(T),
    alive(T),
    mailbox().

#!/usr/bin/env escript
%% start_timer_dead: start_timer to a dead pid succeeds and the timer is not pending; a pending start_timer to a live process is cancelled when that process dies, not when the process that armed it dies.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    T1 = start_timer(20, D, hi),
    ev([start_timer, T1, D, ok]),
    read(T1, 20),
    cancel(T1, 20),
    A = spawn_loop(a),
    T2 = start_timer(5000, A, never),
    read(T2, 5000),
    start_timer(20, A, hello),
    await_fwd(A),
    %% b arms a timer to main and dies; the timer outlives it.
    B = spawn_loop(b),
    Mb = mon(B),
    T4 = call(B, fun() -> start_timer(200, pid(main), from_b) end),
    cast(B, fun() -> exit(boom) end),
    await_down(Mb),
    read(T4, 200),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    read(T2, 5000),
    cancel(T2, 5000),
    recv(),
    settled_mailbox().

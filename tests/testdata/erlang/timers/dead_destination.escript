#!/usr/bin/env escript
%% dead_destination: send_after to a dead pid succeeds and the timer is not pending; a pending timer to a live process is cancelled when that process dies.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    T1 = send_after(20, D, hi),
    ev([send_after, T1, D, ok]),
    read(T1, 20),
    cancel(T1, 20),
    A = spawn_loop(a),
    T2 = send_after(5000, A, never),
    read(T2, 5000),
    send_after(20, A, hello),
    await_fwd(A),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    read(T2, 5000),
    cancel(T2, 5000),
    settled_mailbox().

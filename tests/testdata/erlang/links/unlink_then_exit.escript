#!/usr/bin/env escript
%% unlink_then_exit: a process that unlinks a peer and then exits at once sends it nothing, trapping or not; unlink followed by exit/2 to the former peer reaches it as a plain exit signal from the sender.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a), B = spawn_loop(b),
    true = call(B, fun() -> link(A) end),
    Mb = mon(B),
    cast(B, fun() -> unlink(A), exit(boom) end),
    await_down(Mb),
    ev([call, A, call(A, fun() -> ok end)]),
    alive(A),
    C = spawn_loop(c), D = spawn_loop(d),
    false = call(C, fun() -> process_flag(trap_exit, true) end),
    true = call(D, fun() -> link(C) end),
    Md = mon(D),
    cast(D, fun() -> unlink(C), C ! after_unlink, exit(boom) end),
    await_down(Md),
    await_fwd(C),
    ev([call, C, call(C, fun() -> process_info(self(), message_queue_len) end)]),
    E = spawn_loop(e), F = spawn_loop(f),
    false = call(E, fun() -> process_flag(trap_exit, true) end),
    true = call(F, fun() -> link(E) end),
    cast(F, fun() -> unlink(E), exit(E, boom) end),
    await_fwd(E),
    alive(F),
    mailbox().

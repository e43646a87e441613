#!/usr/bin/env escript
%% trap_exit_toggle: an 'EXIT' message already in the mailbox stays a message when the process stops trapping exits; the next exit signal then kills it.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    false = call(A, fun() -> process_flag(trap_exit, true) end),
    true = call(A, fun() -> link(B) end),
    Ma = mon(A),
    Mb = mon(B),
    cast(B, fun() -> exit(boom) end),
    %% a waits until b's 'EXIT' is in its mailbox, then stops trapping.
    ev([call, A, call(A, fun() -> await_mailbox(1), process_flag(trap_exit, false) end)]),
    await_down(Mb),
    await_fwd(A),
    alive(A),
    true = exit(A, bye),
    await_down(Ma),
    mailbox().

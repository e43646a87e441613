#!/usr/bin/env escript
%% exit_normal_trapping: exit(Pid, normal) and exit(Pid, boom) reach a trapping process as 'EXIT' messages from the sender.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    false = call(A, fun() -> process_flag(trap_exit, true) end),
    true = exit(A, normal),
    await_fwd(A),
    true = exit(A, boom),
    await_fwd(A),
    true = exit(A, {shutdown, x}),
    await_fwd(A),
    alive(A),
    mailbox().

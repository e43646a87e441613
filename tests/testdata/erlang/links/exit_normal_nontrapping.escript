#!/usr/bin/env escript
%% exit_normal_nontrapping: exit(Pid, normal) is ignored by a non-trapping process; exit(Pid, boom) kills it.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    Ma = mon(A),
    true = exit(A, normal),
    %% The call is ordered after the exit signal (same sender, same receiver).
    ev([call, A, call(A, fun() -> still_here end)]),
    alive(A),
    true = exit(A, boom),
    await_down(Ma),
    mailbox().

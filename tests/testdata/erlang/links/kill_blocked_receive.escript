#!/usr/bin/env escript
%% kill_blocked_receive: a process blocked in receive (with or without trap_exit, with or without an after clause) is killed by exit(Pid, kill), and by exit(Pid, boom) if not trapping.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    Block = fun() -> receive never -> ok end end,
    A = spawn_named(a, Block),
    B = spawn_named(b, fun() -> process_flag(trap_exit, true), receive never -> ok end end),
    C = spawn_named(c, fun() -> receive never -> ok after infinity -> ok end end),
    D = spawn_named(d, fun() -> receive never -> ok after 60000 -> ok end end),
    Ma = mon(A),
    Mb = mon(B),
    Mc = mon(C),
    Md = mon(D),
    true = exit(A, kill),
    await_down(Ma),
    %% b must be trapping before the signal arrives: wait until it is.
    wait_trapping(B),
    true = exit(B, kill),
    await_down(Mb),
    true = exit(C, boom),
    await_down(Mc),
    true = exit(D, kill),
    await_down(Md),
    mailbox().

wait_trapping(P) ->
    case process_info(P, trap_exit) of
        {trap_exit, true} -> ok;
        _ -> receive after 1 -> wait_trapping(P) end
    end.

#!/usr/bin/env escript
%% spawn_monitor_crash: spawn_monitor of a child that exits at once gives a DOWN with the child's own reason (boom, normal, {shutdown,x}), never noproc; a non-trapping parent whose spawn_link'ed child crashes at once dies with its reason.
-mode(compile).
-include("../colony_trace.hrl").

%% spawn_mon(Name, F) is spawn_monitor/1 with the pid named Name and the
%% ref named as mon/1 names refs.
spawn_mon(Name, F) ->
    {Pid, Ref} = spawn_monitor(F),
    name(Pid, Name),
    N = ets:update_counter(colony_names, refcount, 1),
    ets:insert(colony_names, {Ref, list_to_atom("m" ++ integer_to_list(N))}),
    Ref.

main(_) ->
    start_trace(),
    Ma = spawn_mon(a, fun() -> exit(boom) end),
    await_down(Ma),
    Mb = spawn_mon(b, fun() -> ok end),
    await_down(Mb),
    Mc = spawn_mon(c, fun() -> exit({shutdown, x}) end),
    await_down(Mc),
    D = spawn_loop(d),
    Md = mon(D),
    cast(D, fun() -> name(spawn_link(fun() -> exit(boom) end), e) end),
    await_down(Md),
    mailbox().

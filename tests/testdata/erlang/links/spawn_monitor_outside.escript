#!/usr/bin/env escript
%% spawn_monitor_outside: spawn_monitor of children that exit at once, as Colony's System.SpawnMonitor does it from code outside any actor: each DOWN has the child's own reason (boom, normal, {shutdown,x}, killed), never noproc, and nothing else arrives.
-mode(compile).
-include("../colony_trace.hrl").

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
    Md = spawn_mon(d, fun() -> exit(self(), kill) end),
    await_down(Md),
    mailbox().

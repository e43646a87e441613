#!/usr/bin/env escript
%% monitor_self: erlang:monitor(process, self()) returns a ref but sets up no monitor: the process holds none and is monitored by none, demonitor of the ref with [info] is false (plain demonitor true), and its death sends nothing to itself or anyone; another process's monitor of it works as usual.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    ev([call, A, call(A, fun() -> R = monitor(process, self()), put(r, R), is_reference(R) end)]),
    ev([call, A, call(A, fun() -> counts() end)]),
    ev([call, A, call(A, fun() -> demonitor(get(r), [info]) end)]),
    ev([call, A, call(A, fun() -> R = monitor(process, self()), {demonitor(R), demonitor(R, [info])} end)]),
    ev([call, A, call(A, fun() -> put(r, monitor(process, self())), counts() end)]),
    Ma = mon(A),
    ev([call, A, call(A, fun() -> counts() end)]),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    mailbox().

%% counts() is {monitors, monitored_by}: how many monitors the caller holds
%% and how many watch it.
counts() ->
    [{monitors, Ms}, {monitored_by, Bs}] = process_info(self(), [monitors, monitored_by]),
    {length(Ms), length(Bs)}.

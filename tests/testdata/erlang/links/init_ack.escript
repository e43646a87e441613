#!/usr/bin/env escript
%% init_ack: proc_lib:start_link returns when the child acknowledges with init_ack: {ok, Pid} and the child runs on; an {error, R} ack followed by exit(R) fails the start with R and the trapping starter gets the 'EXIT'; a child that dies before acking fails it with its exit reason, its 'EXIT' taken by the start; one that never acks is killed at the timeout, with nothing left in the starter's mailbox.
-mode(compile).
-include("../colony_trace.hrl").

start(Name, F, T) ->
    R = proc_lib:start_link(erlang, apply, [fun() -> name(self(), Name), F() end, []], T),
    case R of
        {ok, _} -> ev([start, Name, ok]);
        Other -> ev([start, Name, Other])
    end.

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    start(a, fun() -> proc_lib:init_ack({ok, self()}), loop() end, 5000),
    ev([call, a, call(pid(a), fun() -> ok end)]),
    start(b, fun() -> proc_lib:init_ack({error, bad_config}), exit(bad_config) end, 5000),
    await_exit(pid(b)),
    start(c, fun() -> exit(boom) end, 5000),
    start(d, fun() -> receive never -> ok end end, 100),
    await_dead(pid(d)),
    alive(pid(d)),
    Ma = mon(pid(a)),
    exit(pid(a), kill),
    await_down(Ma),
    await_exit(pid(a)),
    mailbox().

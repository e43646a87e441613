#!/usr/bin/env escript
%% exit_to_dead: exit/2, unlink/1 and demonitor/1 on a dead pid or a spent ref are no-ops that return true.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    Md = mon(D),
    await_down(Md),
    ev([exit2, D, boom, try_(fun() -> exit(D, boom) end)]),
    ev([exit2, D, kill, try_(fun() -> exit(D, kill) end)]),
    ev([unlink, main, D, try_(fun() -> unlink(D) end)]),
    ev([demonitor, Md, try_(fun() -> erlang:demonitor(Md) end)]),
    ev([demonitor, Md, [info], try_(fun() -> erlang:demonitor(Md, [info]) end)]),
    mailbox().

#!/usr/bin/env escript
%% monitor_name: monitor(process, Name) resolves the name once and follows the process that held it, not the name (the name's next holder dying sends nothing); its DOWN names {Name, Node} where a pid monitor's names the pid; a name nobody holds gives that DOWN with noproc at once; demonitor of an active name monitor with [info] is true and sends nothing.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    C = spawn_loop(c),
    ev([call, a, call(A, fun() -> register(srv, self()) end)]),
    ev([call, b, call(B, fun() -> R = monitor(process, srv), ets:insert(colony_names, {R, mb1}), is_reference(R) end)]),
    ev([call, a, call(A, fun() -> unregister(srv) end)]),
    ev([call, c, call(C, fun() -> register(srv, self()) end)]),
    Mc = mon(C),
    cast(C, fun() -> exit(boom) end),
    await_down(Mc),
    ev([call, b, call(B, fun() -> ok end)]),
    cast(A, fun() -> exit(bang) end),
    await_fwd(B),
    ev([call, b, call(B, fun() -> R = monitor(process, nosuch), ets:insert(colony_names, {R, mb2}), ok end)]),
    await_fwd(B),
    D = spawn_loop(d),
    ev([call, d, call(D, fun() -> register(srv, self()) end)]),
    ev([call, b, call(B, fun() -> R = monitor(process, srv), demonitor(R, [info]) end)]),
    cast(D, fun() -> exit(boom) end),
    await_dead(D),
    ev([call, b, call(B, fun() -> ok end)]),
    mailbox().

#!/usr/bin/env escript
%% registered_name: process_info(P, registered_name) is [] for a process with no name, its name while it holds one, [] again after unregister, its new name after it registers another, and undefined once it is dead.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a),
    registered_name(A),
    reg(worker, A),
    registered_name(A),
    unreg(worker),
    registered_name(A),
    ev([call, A, call(A, fun() -> register(other, self()) end)]),
    registered_name(A),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    registered_name(A),
    where(other),
    mailbox().

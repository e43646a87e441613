#!/usr/bin/env escript
%% register_dead: registering a dead pid is badarg and leaves the name free.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    D = spawn_named(d, fun() -> ok end),
    await_dead(D),
    ev([register, worker, D, try_(fun() -> register(worker, D) end)]),
    ev([whereis, worker, whereis(worker)]),
    A = spawn_loop(a),
    ev([register, worker, A, try_(fun() -> register(worker, A) end)]),
    ev([whereis, worker, whereis(worker)]),
    mailbox().

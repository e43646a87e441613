#!/usr/bin/env escript
%% register_taken: one name one pid: a taken name, a pid that already has a name and the name undefined are badarg.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    ev([register, worker, A, try_(fun() -> register(worker, A) end)]),
    ev([register, worker, B, try_(fun() -> register(worker, B) end)]),
    ev([register, other, A, try_(fun() -> register(other, A) end)]),
    ev([register, worker, A, try_(fun() -> register(worker, A) end)]),
    ev([register, undefined, B, try_(fun() -> register(undefined, B) end)]),
    ev([whereis, worker, whereis(worker)]),
    ev([unregister, worker, try_(fun() -> unregister(worker) end)]),
    ev([unregister, worker, try_(fun() -> unregister(worker) end)]),
    ev([whereis, worker, whereis(worker)]),
    ev([register, worker, B, try_(fun() -> register(worker, B) end)]),
    ev([whereis, worker, whereis(worker)]),
    mailbox().

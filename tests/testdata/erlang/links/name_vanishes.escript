#!/usr/bin/env escript
%% name_vanishes: a registered name is gone once its process's DOWN has been seen, and can be registered again.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    ev([register, worker, A, try_(fun() -> register(worker, A) end)]),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    ev([whereis, worker, whereis(worker)]),
    B = spawn_loop(b),
    ev([register, worker, B, try_(fun() -> register(worker, B) end)]),
    ev([whereis, worker, whereis(worker)]),
    worker ! hello,
    await_fwd(B),
    mailbox().

#!/usr/bin/env escript
%% registered_list: registered() lists every registered name (printed: those the scenario registered, sorted): a name is listed from its register, by another process or by the holder itself, until its unregister or its holder's death; a name given again is listed again.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b), C = spawn_loop(c),
    registered_names(),
    reg(alpha, A),
    reg(beta, B),
    ev([call, C, call(C, fun() -> register(gamma, self()) end)]),
    registered_names(),
    unreg(beta),
    registered_names(),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    registered_names(),
    reg(alpha, B),
    registered_names(),
    mailbox().

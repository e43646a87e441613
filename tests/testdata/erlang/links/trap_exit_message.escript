#!/usr/bin/env escript
%% trap_exit_message: a trapping process gets {'EXIT', From, Reason} for abnormal and normal exits of linked peers, and lives on.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    C = spawn_loop(c),
    false = call(A, fun() -> process_flag(trap_exit, true) end),
    true = call(A, fun() -> link(B) end),
    true = call(A, fun() -> link(C) end),
    Mb = mon(B),
    cast(B, fun() -> exit(boom) end),
    await_down(Mb),
    await_fwd(A),
    Mc = mon(C),
    cast(C, fun() -> exit(normal) end),
    await_down(Mc),
    await_fwd(A),
    ev([links, A, call(A, fun() -> element(2, process_info(self(), links)) end)]),
    alive(A),
    mailbox().

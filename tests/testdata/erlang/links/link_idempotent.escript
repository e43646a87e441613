#!/usr/bin/env escript
%% link_idempotent: links are not counted: linking twice and unlinking once leaves no link.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    A = spawn_loop(a),
    true = link(A),
    true = link(A),
    ev([links, main, element(2, process_info(self(), links)) -- [whereis(init) | ancestors_links()]]),
    ev([unlink, main, A, unlink(A)]),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    B = spawn_loop(b),
    true = link(B),
    true = call(B, fun() -> link(self()) end),
    true = call(B, fun() -> link(pid(main)) end),
    Mb = mon(B),
    cast(B, fun() -> exit(boom) end),
    await_down(Mb),
    await_exit(B),
    mailbox().

%% The escript's main process has links of its own (to the process that
%% started it); leave them out of the printed list.
ancestors_links() ->
    [P || P <- element(2, process_info(self(), links)), not ets:member(colony_names, P)].

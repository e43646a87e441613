#!/usr/bin/env escript
%% name_free_at_exit: a process's name is free by the time a linked peer gets its exit signal: a trapping peer handling the 'EXIT' finds whereis undefined and can register the name at once.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

main(_) ->
    start_trace(),
    start_pg(),
    A = spawn_loop(a), B = spawn_loop(b),
    reg(worker, A),
    call(B, fun() -> process_flag(trap_exit, true) end),
    call(B, fun() -> link(A) end),
    cast(B, fun() ->
                receive
                    {'EXIT', A, R} ->
                        W = whereis(worker),
                        Reg = try_(fun() -> register(worker, self()) end),
                        pid(main) ! {fwd, self(), {exit_seen, A, R, W, Reg}}
                end
            end),
    cast(A, fun() -> exit(boom) end),
    await_fwd(B),
    where(worker),
    mailbox().

#!/usr/bin/env escript
%% spawn_link_crash_trapping: a trapping parent gets {'EXIT', Child, Reason} from spawn_link'ed children that crash, exit with {shutdown, x} or return.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    A = spawn_link_named(a, fun() -> exit(boom) end),
    await_exit(A),
    B = spawn_link_named(b, fun() -> exit({shutdown, x}) end),
    await_exit(B),
    C = spawn_link_named(c, fun() -> ok end),
    await_exit(C),
    alive(self()),
    mailbox().

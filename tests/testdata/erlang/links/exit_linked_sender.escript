#!/usr/bin/env escript
%% exit_linked_sender: exit(Peer, boom) from a process linked to Peer kills Peer with boom, and Peer's death comes back along the link: a non-trapping sender dies with boom, a trapping one gets {'EXIT', Peer, boom}.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a), B = spawn_loop(b),
    true = call(B, fun() -> link(A) end),
    Ma = mon(A),
    Mb = mon(B),
    cast(B, fun() -> exit(A, boom) end),
    await_down(Ma),
    await_down(Mb),
    C = spawn_loop(c), D = spawn_loop(d),
    false = call(C, fun() -> process_flag(trap_exit, true) end),
    true = call(C, fun() -> link(D) end),
    Md = mon(D),
    cast(C, fun() -> exit(D, boom) end),
    await_down(Md),
    await_fwd(C),
    alive(C),
    mailbox().

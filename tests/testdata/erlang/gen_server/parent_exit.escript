#!/usr/bin/env escript
%% parent_exit: an exit signal from the parent (the start_link caller) runs terminate with its reason only in a trapping server; a non-trapping one dies without terminate; an 'EXIT' from another process reaches a trapping server's handle_info.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    A = start_link_srv(a, #{trap => true}),
    Ma = mon(A),
    true = exit(A, shutdown),
    await_gs(A),
    await_down(Ma),
    await_exit(A),
    B = start_link_srv(b, #{}),
    Mb = mon(B),
    true = exit(B, shutdown),
    await_down(Mb),
    await_exit(B),
    C = start_link_srv(c, #{trap => true}),
    K = spawn_loop(k),
    true = call(K, fun() -> exit(C, boom) end),
    await_gs(C),
    gen_call(C, ping),
    Mc = mon(C),
    true = exit(C, {shutdown, x}),
    await_gs(C),
    await_down(Mc),
    await_exit(C),
    mailbox().

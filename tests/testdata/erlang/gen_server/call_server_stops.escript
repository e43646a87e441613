#!/usr/bin/env escript
%% call_server_stops: a server that stops from handle_call without replying ({stop, R, S}) exits its caller with R, normal and {shutdown, x} included; terminate runs with R first; nothing is left in the caller's mailbox.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    A = start_srv(a, #{}),
    Ma = mon(A),
    gen_call(A, {stop, boom}),
    await_gs(A),
    await_down(Ma),
    B = start_srv(b, #{}),
    Mb = mon(B),
    gen_call(B, {stop, normal}),
    await_gs(B),
    await_down(Mb),
    C = start_srv(c, #{}),
    Mc = mon(C),
    gen_call(C, {stop, {shutdown, x}}),
    await_gs(C),
    await_down(Mc),
    mailbox().

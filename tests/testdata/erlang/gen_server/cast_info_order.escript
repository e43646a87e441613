#!/usr/bin/env escript
%% cast_info_order: casts, plain messages and a call from one sender reach the server's callbacks in send order; the call's reply comes after the callbacks of everything sent before it.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    ok = gen_server:cast(Srv, {note, 1}),
    Srv ! hello,
    ok = gen_server:cast(Srv, {note, 2}),
    Srv ! {plain, 3},
    gen_call(Srv, ping),
    %% The reports were sent before the reply: all four are in the mailbox.
    [await_gs(Srv) || _ <- lists:seq(1, 4)],
    M = mon(Srv),
    ok = gen_server:cast(Srv, {stop, normal}),
    await_gs(Srv),
    await_down(M),
    mailbox().

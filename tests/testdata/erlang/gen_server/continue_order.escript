#!/usr/bin/env escript
%% continue_order: handle_continue runs before any message the server has not taken yet: init's {continue, _} before the casts and sends already queued to its registered name while init ran, handle_call's {reply, R, S, {continue, _}} after the reply and before a cast queued while the call ran; a handle_continue returning {continue, _} chains before them too.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Q = spawn_named(q, fun() ->
        receive {holding, Srv} ->
            ok = gen_server:cast(srv, {note, 1}),
            srv ! hello,
            ok = gen_server:cast(srv, {note, 2}),
            Srv ! go
        end
    end),
    S1 = start_srv(s1, #{reg => srv, gate => Q, cont => [x, z]}),
    [await_gs(S1) || _ <- lists:seq(1, 5)],
    R = spawn_named(r, fun() ->
        receive {holding, Srv} ->
            ok = gen_server:cast(Srv, {note, 3}),
            Srv ! go
        end
    end),
    gen_call(S1, {cont, R, [y, z]}),
    [await_gs(S1) || _ <- lists:seq(1, 3)],
    M = mon(S1),
    ok = gen_server:cast(S1, {stop, normal}),
    await_gs(S1),
    await_down(M),
    mailbox().

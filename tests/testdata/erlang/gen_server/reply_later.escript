#!/usr/bin/env escript
%% reply_later: a call kept with noreply is answered later: by another process with gen_server:reply, or by the server itself from a later message.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    %% r answers the call it is handed, then forwards what it got back to main.
    R = spawn_named(r, fun() ->
        receive {reply_for, From} -> pid(main) ! {replied, gen_server:reply(From, {from, r})} end
    end),
    gen_call(Srv, {hand_to, R}),
    receive {replied, Ok} -> ev([reply, r, Ok]) end,
    gen_call(Srv, later),
    gen_call(Srv, ping),
    M = mon(Srv),
    ok = gen_server:cast(Srv, {stop, normal}),
    await_gs(Srv),
    await_down(M),
    mailbox().

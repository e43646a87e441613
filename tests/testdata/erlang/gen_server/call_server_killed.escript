#!/usr/bin/env escript
%% call_server_killed: a server killed while it holds a call exits the caller with killed; terminate does not run.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    M = mon(Srv),
    %% k kills the server once the server holds main's call.
    K = spawn_named(k, fun() -> receive {holding, S} -> exit(S, kill) end end),
    gen_call(Srv, {hold_notify, K}),
    await_down(M),
    mailbox().

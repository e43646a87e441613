#!/usr/bin/env escript
%% call_timeout_late_reply: a call that times out exits the caller with timeout; the server's late reply is dropped: the caller's mailbox stays empty, and the server runs on.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    %% The server holds the call until told to release it: the timeout always fires.
    gen_call(Srv, hold, 50),
    ok = gen_server:cast(Srv, {release, late}),
    %% A round trip after the cast: the late reply has been sent.
    gen_call(Srv, ping),
    mailbox(),
    M = mon(Srv),
    ok = gen_server:cast(Srv, {stop, normal}),
    await_gs(Srv),
    await_down(M),
    mailbox().

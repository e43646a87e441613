#!/usr/bin/env escript
%% stop_reply_order: {stop, Reason, Reply, State} from handle_call runs terminate/2 before the caller gets its reply (the server's report from terminate reaches the caller first: one sender, in order), with normal and with boom.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

%% terminated_first(Srv) prints whether Srv's terminate report is already
%% in main's mailbox when its reply has come.
terminated_first(Srv) ->
    receive
        {gs, Srv, [terminate, R]} -> ev([terminated_before_reply, Srv, R])
    after 0 -> ev([reply_before_terminate, Srv])
    end.

main(_) ->
    start_trace(),
    A = start_srv(a, #{}),
    Ma = mon(A),
    gen_call(A, {stop, normal, bye}),
    terminated_first(A),
    await_down(Ma),
    B = start_srv(b, #{trap => true}),
    Mb = mon(B),
    gen_call(B, {stop, boom, bye}),
    terminated_first(B),
    await_down(Mb),
    mailbox().

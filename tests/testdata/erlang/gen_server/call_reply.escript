#!/usr/bin/env escript
%% call_reply: calls are answered with the callback's reply; a cast {stop, normal} runs terminate with normal, which the monitor sees.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    M = mon(Srv),
    gen_call(Srv, ping),
    gen_call(Srv, {echo, {a, [1, 2]}}),
    gen_call(Srv, {echo, hello}),
    ok = gen_server:cast(Srv, {stop, normal}),
    await_gs(Srv),
    await_down(M),
    mailbox().

#!/usr/bin/env escript
%% call_noproc: a call to a dead server exits the caller with noproc at once, whatever the timeout, and leaves nothing in its mailbox; a cast to it is ok.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    M = mon(Srv),
    ok = gen_server:cast(Srv, {stop, normal}),
    await_gs(Srv),
    await_down(M),
    gen_call(Srv, ping),
    gen_call(Srv, ping, infinity),
    ev([gen_cast, Srv, gen_server:cast(Srv, {note, x})]),
    mailbox().

#!/usr/bin/env escript
%% timeout_rearm: a gen_server timeout fires only once the mailbox has stayed empty for the period: messages already queued when it is set are handled first; a callback that returns no timeout cancels it.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    Srv = start_srv(srv, #{}),
    %% Three pokes are queued before the timeout is set; each poke re-arms it,
    %% so it fires once, after the last poke.
    ok = gen_server:cast(Srv, {pokes, 3, 50, true}),
    [await_gs(Srv) || _ <- lists:seq(1, 4)],
    %% A reply with a timeout: nothing follows, so it fires.
    gen_call(Srv, {arm, 50}),
    await_gs(Srv),
    %% The pokes do not re-arm: the timeout never fires. Waiting three
    %% periods shows it (the reports would be in the mailbox by then).
    ok = gen_server:cast(Srv, {pokes, 2, 50, false}),
    [await_gs(Srv) || _ <- lists:seq(1, 2)],
    receive after 150 -> ok end,
    gen_call(Srv, ping),
    mailbox(),
    M = mon(Srv),
    ok = gen_server:cast(Srv, {stop, normal}),
    await_gs(Srv),
    await_down(M),
    mailbox().

#!/usr/bin/env escript
%% continue_stop: {noreply, S, {continue, _}} from handle_cast and handle_info runs handle_continue before the next message (a call sent after them is answered after both continues); a handle_continue that returns {stop, boom, S} terminates the server with boom, and the cast and message queued behind it are never handled.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    S = start_srv(srv, #{}),
    ok = gen_server:cast(S, {cont, [a, b]}),
    S ! {cont, [c]},
    gen_call(S, ping),
    [await_gs(S) || _ <- lists:seq(1, 3)],
    M = mon(S),
    ok = gen_server:cast(S, {cont, [d, {stop, boom}]}),
    ok = gen_server:cast(S, {note, 9}),
    S ! hello,
    [await_gs(S) || _ <- lists:seq(1, 3)],
    await_down(M),
    mailbox().

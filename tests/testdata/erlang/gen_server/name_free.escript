#!/usr/bin/env escript
%% name_free: a call to a name nobody holds (never registered, or freed by its holder's death) exits the caller with noproc at once, whatever the timeout, and leaves nothing in its mailbox; a cast to it returns ok and the message is lost (Colony's CastName returns ErrNotRegistered: docs/guarantees.md): a server that takes the name later never gets it.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    gen_call(nobody, ping),
    gen_call(nobody, ping, infinity),
    gen_cast(nobody, {note, lost}),
    S1 = start_srv(s1, #{reg => srv}),
    M = mon(S1),
    gen_cast(srv, {stop, normal}),
    await_gs(S1),
    await_down(M),
    gen_call(srv, ping),
    gen_cast(srv, {note, lost}),
    S2 = start_srv(s2, #{reg => srv}),
    %% s2's first report is the cast it got after it took the name.
    gen_cast(srv, {note, found}),
    await_gs(S2),
    gen_call(srv, whoami),
    mailbox().

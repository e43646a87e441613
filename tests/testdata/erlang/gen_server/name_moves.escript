#!/usr/bin/env escript
%% name_moves: a call by name goes to whoever holds the name at the call: a crashed server's name is free (a call by name is noproc) by the time its trapping parent gets the 'EXIT', and the parent's restart takes it at once; calls by name then reach the new server, and a call to the old pid is noproc.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    S1 = start_link_srv(s1, #{reg => srv}),
    gen_call(srv, whoami),
    gen_cast(srv, {stop, boom}),
    await_gs(S1),
    await_exit(S1),
    gen_call(srv, whoami),
    S2 = start_link_srv(s2, #{reg => srv}),
    gen_call(srv, whoami),
    gen_call(S1, whoami),
    gen_cast(srv, {stop, normal}),
    await_gs(S2),
    await_exit(S2),
    mailbox().

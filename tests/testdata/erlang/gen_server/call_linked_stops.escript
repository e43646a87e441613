#!/usr/bin/env escript
%% call_linked_stops: a trapping caller linked to a server it started with start_link, whose handle_call stops without replying ({stop, R, S}): the call exits with R, and by then the server's 'EXIT' is already in the caller's mailbox (a receive ... after 0 finds it: the server sends its link's exit signal before the DOWN of the call's monitor), behind terminate's report; trapping server or not, boom or normal.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    A = start_link_srv(a, #{}),
    gen_call(A, {stop, boom}),
    exit_now(A),
    await_gs(A),
    B = start_link_srv(b, #{trap => true}),
    gen_call(B, {stop, normal}),
    exit_now(B),
    await_gs(B),
    mailbox().

%% exit_now(P) takes P's 'EXIT' if it is in the mailbox now, else prints
%% "timeout main".
exit_now(P) ->
    receive
        {'EXIT', P, R} -> ev([exit, self(), P, R])
    after 0 -> ev([timeout, main])
    end.

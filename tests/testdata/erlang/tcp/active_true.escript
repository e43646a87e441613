#!/usr/bin/env escript
%% active_true: {active, true} delivers every chunk with no tcp_passive; {active, N} set on it replaces it (N messages, then tcp_passive); true again, then the peer's close gives tcp_closed.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    setopts(main, Ss, true),
    send(C, Cs, 1),
    next(),
    send(C, Cs, 2),
    next(),
    send(C, Cs, 3),
    next(),
    %% a count replaces true: one message, then tcp_passive
    setopts(main, Ss, 1),
    send(C, Cs, 4),
    next(),
    next(),
    %% true again; the peer closes
    setopts(main, Ss, true),
    close(C, Cs),
    next(),
    close(main, Ss),
    close(main, L),
    mailbox().

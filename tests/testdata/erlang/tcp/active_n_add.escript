#!/usr/bin/env escript
%% active_n_add: {active, N} on a socket already in {active, M} mode adds N to the count (M + N messages before tcp_passive); once and false replace it.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    setopts(main, Ss, 1),
    setopts(main, Ss, 2),
    send(C, Cs, 1),
    next(),
    send(C, Cs, 2),
    next(),
    send(C, Cs, 3),
    next(),
    next(),
    %% once replaces a count: one message, no tcp_passive
    setopts(main, Ss, 5),
    setopts(main, Ss, once),
    send(C, Cs, 4),
    next(),
    send(C, Cs, 5),
    quiet(),
    %% a count replaces once; false replaces a count (no tcp_passive)
    setopts(main, Ss, 2),
    next(),
    setopts(main, Ss, false),
    send(C, Cs, 6),
    quiet(),
    recv(main, Ss, 6, 5000),
    close(C, Cs),
    close(main, Ss),
    close(main, L),
    mailbox().

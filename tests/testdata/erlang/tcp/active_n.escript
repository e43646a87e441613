#!/usr/bin/env escript
%% active_n: {active, 3} delivers three messages (one per send, each taken before the next send) and then tcp_passive; data sent while passive waits for the next {active, N}.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    setopts(main, Ss, 3),
    send(C, Cs, 10),
    next(),
    send(C, Cs, 20),
    next(),
    send(C, Cs, 30),
    next(),
    next(),
    send(C, Cs, 40),
    quiet(),
    setopts(main, Ss, 1),
    next(),
    next(),
    quiet(),
    close(C, Cs),
    close(main, Ss),
    close(main, L),
    mailbox().

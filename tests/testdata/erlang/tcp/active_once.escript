#!/usr/bin/env escript
%% active_once: with {active, once} the first data arrives as one message and the socket turns passive; data sent meanwhile waits in the kernel (no message) until read with recv or re-armed.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    setopts(main, Ss, once),
    send(C, Cs, 5),
    next(),
    send(C, Cs, 1),
    send(C, Cs, 2),
    send(C, Cs, 3),
    quiet(),
    recv(main, Ss, 6, 5000),
    setopts(main, Ss, once),
    quiet(),
    send(C, Cs, 7),
    next(),
    quiet(),
    close(C, Cs),
    close(main, Ss),
    close(main, L),
    mailbox().

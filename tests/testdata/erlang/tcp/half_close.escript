#!/usr/bin/env escript
%% half_close: after shutdown(S, write) the peer's recv says closed, but the peer can still send back and the half-closed side still reads; when the peer closes too, its recv says closed.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    send(C, Cs, 11),
    shutdown(C, Cs),
    recv_all(main, Ss),
    send(main, Ss, 4),
    send(main, Ss, 5000),
    recv(C, Cs, 5004, 5000),
    setopts(C, Cs, once),
    close(main, Ss),
    next(),
    close(C, Cs),
    close(main, L),
    mailbox().

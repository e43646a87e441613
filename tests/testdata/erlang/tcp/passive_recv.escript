#!/usr/bin/env escript
%% passive_recv: recv on an idle passive socket times out; recv(S, N) waits for exactly N bytes sent in pieces; after the peer shuts down its side, recv(S, 0) returns the data left and then {error, closed}, again and again.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    recv(main, Ss, 0, 50),
    recv(main, Ss, 0, 0),
    send(C, Cs, 100),
    send(C, Cs, 200),
    send(C, Cs, 300),
    recv(main, Ss, 600, 5000),
    send(C, Cs, 70000),
    shutdown(C, Cs),
    recv_all(main, Ss),
    recv(main, Ss, 0, 50),
    recv(main, Ss, 10, 50),
    close(C, Cs),
    close(main, Ss),
    close(main, L),
    mailbox().

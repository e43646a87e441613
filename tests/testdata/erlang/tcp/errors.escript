#!/usr/bin/env escript
%% errors: connect to a port nobody listens on is econnrefused; listen on a port in use is eaddrinuse; on a closed socket send, recv, accept, controlling_process and shutdown say closed, setopts einval, close ok; recv on an active socket is einval.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L0, Free} = tcp_listen(l0, 0),
    close(main, L0),
    connect(C, cs0, Free),
    {ok, L, Port} = tcp_listen(ls, 0),
    tcp_listen(l2, Port),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    setopts(main, Ss, once),
    recv(main, Ss, 0, 50),
    setopts(main, Ss, false),
    close(C, Cs),
    close(C, Cs),
    send(C, Cs, 1),
    recv(C, Cs, 0, 50),
    setopts(C, Cs, once),
    controlling(C, Cs, main),
    shutdown(C, Cs),
    close(main, L),
    op(main, accept, L, fun() -> gen_tcp:accept(L, 50) end),
    recv_all(main, Ss),
    close(main, Ss),
    mailbox().

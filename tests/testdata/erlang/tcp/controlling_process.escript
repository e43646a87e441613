#!/usr/bin/env escript
%% controlling_process: the owner hands a socket to another process, whose messages then go there; the old owner and any other process get {error, not_owner}; a dead target is badarg; the new owner can hand it back.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    B = spawn_loop(b),
    D = spawn_loop(d),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    controlling(main, Ss, main),
    controlling(main, Ss, B),
    controlling(main, Ss, D),
    controlling(D, Ss, D),
    controlling(C, Ss, C),
    setopts(B, Ss, once),
    send(C, Cs, 8),
    next(),
    quiet(),
    Dead = spawn_named(x, fun() -> ok end),
    await_dead(Dead),
    controlling(B, Ss, Dead),
    controlling(B, Ss, main),
    setopts(main, Ss, once),
    send(C, Cs, 9),
    next(),
    controlling(C, Cs, B),
    setopts(B, Cs, once),
    send(main, Ss, 10),
    next(),
    close(B, Cs),
    close(main, Ss),
    close(main, L),
    mailbox().

#!/usr/bin/env escript
%% owner_dies: a socket is closed when its owner dies, killed or crashing, and the peer sees tcp_closed (active) or {error, closed} (passive recv); a socket handed to another process lives on when its first owner dies.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    _Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    setopts(main, Ss, once),
    Mc = mon(C),
    exit(C, kill),
    await_down(Mc),
    next(),
    close(main, Ss),
    %% a passive peer blocked in recv
    B = spawn_loop(b),
    _Bs = connect(B, bs, Port),
    Ts = accept(L, ts),
    E = spawn_loop(e),
    controlling(main, Ts, E),
    Mb = mon(B),
    cast(B, fun() -> exit(boom) end),
    await_down(Mb),
    recv(E, Ts, 0, 5000),
    close(E, Ts),
    %% a socket given away survives its first owner
    D = spawn_loop(d),
    Ds = connect(D, ds, Port),
    Us = accept(L, us),
    controlling(D, Ds, main),
    Md = mon(D),
    cast(D, fun() -> exit(boom) end),
    await_down(Md),
    send(main, Ds, 3),
    recv(main, Us, 3, 5000),
    close(main, Ds),
    close(main, Us),
    close(main, L),
    mailbox().

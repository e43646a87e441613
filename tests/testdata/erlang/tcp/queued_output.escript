#!/usr/bin/env escript
%% queued_output: output queued on a socket (20 MB sent to a peer that is not reading: most of it waits in the socket) is not lost when the socket closes: its owner exits normally, is killed, or closes it, and the peer then reads every byte, then {error, closed}.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

-define(BIG, 20000000).

main(_) ->
    start_trace(),
    {ok, L, Port} = tcp_listen(ls, 0),
    %% the owner exits normally
    C = spawn_loop(c),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    send_big(C, Cs, ?BIG),
    Mc = mon(C),
    cast(C, fun() -> exit(normal) end),
    await_down(Mc),
    recv_all(main, Ss),
    close(main, Ss),
    %% the owner is killed
    B = spawn_loop(b),
    Bs = connect(B, bs, Port),
    Ts = accept(L, ts),
    send_big(B, Bs, ?BIG),
    Mb = mon(B),
    exit(B, kill),
    await_down(Mb),
    recv_all(main, Ts),
    close(main, Ts),
    %% the owner closes it while the peer is not reading (gen_tcp:close
    %% returns once the output is out, Colony's Close at once: d forwards
    %% the result, which main prints once it has read everything)
    D = spawn_loop(d),
    Ds = connect(D, ds, Port),
    Us = accept(L, us),
    send_big(D, Ds, ?BIG),
    cast(D, fun() -> pid(main) ! {fwd, self(), {close, gen_tcp:close(Ds)}} end),
    recv_all(main, Us),
    await_fwd(D),
    close(main, Us),
    close(main, L),
    mailbox().

#!/usr/bin/env escript
%% send_timeout: gen_tcp's flow control on output (Colony's SendWait). With {high_watermark, 65536} and {low_watermark, 32768}, c's 16 MiB in 64 KiB sends to a peer that is not reading, far more than the kernel holds, block: c has not finished when main looks; once main reads, they resume and every byte arrives, then EOF. With {send_timeout, 100}, sends to a peer that is not reading fail with {error, timeout} once the queue is above the high watermark (how many succeed first is the kernel's business: not printed), and so does the next send, the queue still being above the low watermark.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

-define(CHUNKS, 256).

main(_) ->
    start_trace(),
    {ok, L, Port} = tcp_listen(ls, 0),
    %% a send blocks above the high watermark and resumes as the peer reads
    C = spawn_loop(c),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    watermarks(C, Cs, 32768, 65536),
    Main = pid(main),
    cast(C, fun() ->
                R = send_chunks(Cs, ?CHUNKS),
                Main ! {fwd, self(), {sent, R, gen_tcp:close(Cs)}}
            end),
    quiet(),
    recv_all(main, Ss),
    await_fwd(C),
    close(main, Ss),
    %% a send times out above the high watermark, and again
    D = spawn_loop(d),
    Ds = connect(D, ds, Port),
    Us = accept(L, us),
    watermarks(D, Ds, 32768, 65536),
    send_timeout(D, Ds, 100),
    send_until_timeout(D, Ds),
    send_chunk(D, Ds),
    close(main, Us),
    close(D, Ds),
    close(main, L),
    mailbox().

%% watermarks(P, S, Low, High): P sets S's watermarks; prints
%% "watermarks <p> <sock> <low> <high> <result>".
watermarks(P, S, Low, High) ->
    R = run(P, fun() -> inet:setopts(S, [{low_watermark, Low}, {high_watermark, High}]) end),
    ev([watermarks, P, sk(S), Low, High, R]).

%% send_timeout(P, S, T): P sets S's send timeout (ms); prints
%% "send_timeout <p> <sock> <t> <result>".
send_timeout(P, S, T) ->
    R = run(P, fun() -> inet:setopts(S, [{send_timeout, T}]) end),
    ev([send_timeout, P, sk(S), T, R]).

%% send_chunks(S, N) sends payload(65536) N times; ok, or the first error.
send_chunks(S, N) -> send_chunks(S, payload(65536), N).

send_chunks(_, _, 0) -> ok;
send_chunks(S, B, N) ->
    case gen_tcp:send(S, B) of
        ok -> send_chunks(S, B, N - 1);
        E -> E
    end.

%% send_until_timeout(P, S): P sends payload(65536) until a send fails (at
%% most 100000 times); prints "send_until_timeout <p> <sock> <error>" (how
%% many succeeded first is not printed: the kernel decides).
send_until_timeout(P, S) ->
    R = run(P, fun() -> send_until_timeout_(S, payload(65536), 100000) end),
    ev([send_until_timeout, P, sk(S), R]).

send_until_timeout_(_, _, 0) -> no_error;
send_until_timeout_(S, B, K) ->
    case gen_tcp:send(S, B) of
        ok -> send_until_timeout_(S, B, K - 1);
        E -> E
    end.

%% send_chunk(P, S): P sends payload(65536) once; "send <p> <sock> 65536 <result>".
send_chunk(P, S) -> send(P, S, 65536).

%% colony_tcp.hrl: helpers of the socket scenarios (tcp/), included after
%% colony_trace.hrl.
%%
%% Both ends of every connection run in the escript's node, on loopback:
%% main owns the listener and the accepted socket, a loop/0 process (c) is
%% the client, driven with call/2. Only main prints. A socket is printed by
%% its name (ls, ss, cs, ...), kept in the names table like pids; the data
%% of an exchange only as its size and CRC-32 (erlang:crc32/1, the IEEE
%% polynomial Go's hash/crc32 uses), never as bytes or as a count of
%% messages where the kernel may split or join the bytes. Results are
%% printed as gen_tcp returns them, {ok, Bin} as {ok,Size,Crc}.

%% The options closest to Colony's sockets: binary, raw, passive until
%% armed, no Nagle (Colony sets TCP_NODELAY), and {exit_on_close, false}: a
%% Colony socket stays open for writing after the peer closed (half-close)
%% until it is closed.
-define(TCP_OPTS, [binary, {packet, raw}, {active, false}, {nodelay, true},
                   {exit_on_close, false}]).

%% sock(S, Name) names the socket S; returns S.
sock(S, Name) ->
    ets:insert(colony_names, {{sock, S}, Name}),
    S.

sk(S) ->
    case ets:lookup(colony_names, {sock, S}) of
        [{_, N}] -> N;
        [] -> unnamed_sock
    end.

%% payload(N) is N deterministic bytes.
payload(N) -> << <<((I * 7 + I div 251) rem 256)>> || I <- lists:seq(0, N - 1) >>.

%% big(N) is N bytes of payload(65536) over and over: payload/1 builds a
%% list of N integers first, too much for megabytes.
big(N) -> binary:part(binary:copy(payload(65536), N div 65536 + 1), 0, N).

%% res(R) is a result as printed: {ok, Bin} as {ok,Size,Crc}.
res({ok, B}) when is_binary(B) -> {ok, byte_size(B), erlang:crc32(B)};
res(R) -> R.

%% tcp_listen(Name, Port) listens on 127.0.0.1:Port and prints
%% "listen <name> <result>"; returns {ok, L, Port} or the error.
tcp_listen(Name, Port) ->
    case gen_tcp:listen(Port, [{ip, {127, 0, 0, 1}}, {reuseaddr, true} | ?TCP_OPTS]) of
        {ok, L} ->
            sock(L, Name),
            ev([listen, Name, ok]),
            {ok, P} = inet:port(L),
            {ok, L, P};
        E ->
            ev([listen, Name, E]),
            E
    end.

%% connect(P, Name, Port): P connects to 127.0.0.1:Port; prints
%% "connect <p> <name> <result>"; returns the socket (or the error).
connect(P, Name, Port) ->
    case call(P, fun() -> gen_tcp:connect({127, 0, 0, 1}, Port, ?TCP_OPTS) end) of
        {ok, S} -> sock(S, Name), ev([connect, P, Name, ok]), S;
        E -> ev([connect, P, Name, E]), E
    end.

%% accept(L, Name): main accepts; prints "accept main <name> ok".
accept(L, Name) ->
    case gen_tcp:accept(L, 5000) of
        {ok, S} -> sock(S, Name), ev([accept, main, Name, ok]), S;
        E -> ev([accept, main, Name, E]), E
    end.

%% op(P, What, S, F) runs F in P (main: at once) and prints
%% "<what> <p> <sock> <result>".
op(P, What, S, F) ->
    R = run(P, F),
    ev([What, P, sk(S), res(R)]),
    R.

%% run(P, F) runs F in P: at once in main (P is main or self()), else with
%% call/2.
run(main, F) -> try_(F);
run(P, F) ->
    case P =:= self() of
        true -> try_(F);
        false -> call(P, F)
    end.

%% send(P, S, N): P sends payload(N) on S; "send <p> <sock> <n> <result>".
send(P, S, N) ->
    R = run(P, fun() -> gen_tcp:send(S, payload(N)) end),
    ev([send, P, sk(S), N, R]),
    R.

%% send_big(P, S, N): send/3 with big(N), printed the same way.
send_big(P, S, N) ->
    R = run(P, fun() -> gen_tcp:send(S, big(N)) end),
    ev([send, P, sk(S), N, R]),
    R.

recv(P, S, N, T) -> op(P, recv, S, fun() -> gen_tcp:recv(S, N, T) end).
setopts(P, S, A) ->
    R = run(P, fun() -> inet:setopts(S, [{active, A}]) end),
    ev([setopts, P, sk(S), {active, A}, R]),
    R.
close(P, S) -> op(P, close, S, fun() -> gen_tcp:close(S) end).
shutdown(P, S) -> op(P, shutdown, S, fun() -> gen_tcp:shutdown(S, write) end).
controlling(P, S, To) ->
    R = run(P, fun() -> gen_tcp:controlling_process(S, who(To)) end),
    ev([controlling_process, P, sk(S), To, R]),
    R.

who(main) -> pid(main);
who(P) -> P.

%% recv_all(P, S) reads with recv(S, 0) until an error and prints
%% "recv_all <p> <sock> <size> <crc> <error>".
recv_all(P, S) ->
    {B, E} = run(P, fun() -> recv_all_(S, <<>>) end),
    ev([recv_all, P, sk(S), byte_size(B), erlang:crc32(B), E]).

recv_all_(S, Acc) ->
    case gen_tcp:recv(S, 0, 5000) of
        {ok, B} -> recv_all_(S, <<Acc/binary, B/binary>>);
        E -> {Acc, E}
    end.

%% tcp_msg(Who, M) prints a socket message Who received:
%% "tcp <who> <sock> <size> <crc>", "tcp_closed <who> <sock>",
%% "tcp_error <who> <sock> <reason>", "tcp_passive <who> <sock>".
tcp_msg(Who, {tcp, S, D}) -> ev([tcp, Who, sk(S), byte_size(D), erlang:crc32(D)]);
tcp_msg(Who, {tcp_closed, S}) -> ev([tcp_closed, Who, sk(S)]);
tcp_msg(Who, {tcp_error, S, R}) -> ev([tcp_error, Who, sk(S), R]);
tcp_msg(Who, {tcp_passive, S}) -> ev([tcp_passive, Who, sk(S)]);
tcp_msg(Who, M) -> print_msg(Who, M).

%% next() takes main's next message and prints it (a socket message, or
%% what loop/0 forwarded: a socket message as received by the forwarder).
next() ->
    receive
        {fwd, P, M} -> tcp_msg(P, M);
        M -> tcp_msg(self(), M)
    end.

%% quiet() shows that nothing arrives: it waits 50 ms for a message and
%% prints "quiet main", or the message. Loopback delivers in microseconds;
%% no scenario waits on a quiet() for a message that would come.
quiet() ->
    receive
        {fwd, P, M} -> tcp_msg(P, M);
        M -> tcp_msg(self(), M)
    after 50 -> ev([quiet, main])
    end.

%% collect(S) re-arms S with {active, once} until tcp_closed, adding up the
%% data, and prints "tcp_all main <sock> <size> <crc>" then the message that
%% ended it.
collect(S) -> collect(S, <<>>).

collect(S, Acc) ->
    ok = inet:setopts(S, [{active, once}]),
    receive
        {tcp, S, D} -> collect(S, <<Acc/binary, D/binary>>);
        {tcp_closed, S} = M ->
            ev([tcp_all, main, sk(S), byte_size(Acc), erlang:crc32(Acc)]),
            tcp_msg(main, M);
        {tcp_error, S, _} = M ->
            ev([tcp_all, main, sk(S), byte_size(Acc), erlang:crc32(Acc)]),
            tcp_msg(main, M)
    end.

%% send_until_error(P, S) sends one byte every millisecond until gen_tcp
%% reports an error (at most 2000 tries) and prints
%% "send_until_error <p> <sock> <error>": after the peer closed, the first
%% sends succeed until its reset comes back, which timing decides, so only
%% the error is printed.
send_until_error(P, S) ->
    R = run(P, fun() -> send_until_error_(S, 2000) end),
    ev([send_until_error, P, sk(S), R]).

send_until_error_(_, 0) -> no_error;
send_until_error_(S, K) ->
    case gen_tcp:send(S, <<"x">>) of
        ok -> timer:sleep(1), send_until_error_(S, K - 1);
        E -> E
    end.

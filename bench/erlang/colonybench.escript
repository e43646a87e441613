#!/usr/bin/env escript
%%! +P 5000000 -noinput
%% Colony benchmark suite: the Erlang/OTP implementations of the workloads in ../workloads.go.
%%
%% Usage: escript colonybench.escript WORKLOAD N ACTORS DEPTH MAXDELAY_MS SEED
%% Prints one line the Go runner parses:
%%   RESULT otp=25 wall_ns=123 check=456 [p99_late_ns=.. max_late_ns=..] [bytes_per_actor=..]
%%
%% Semantics match the Go implementations exactly (same sizes, same answers, same checks); see the
%% Expect functions in workloads.go. Each run is a fresh VM, timed from inside, so VM start-up and
%% script compilation are not measured. -mode(compile) makes this compiled code, not the
%% interpreter (which is 10-100x slower).
-mode(compile).
-behaviour(gen_server).
-export([main/1, init/1, handle_call/3, handle_cast/2]).

main([W, N, A, D, MaxMs, Seed]) ->
    main([W, N, A, D, MaxMs, Seed, "0"]);
main([W, N, A, D, MaxMs, Seed, BaseMs]) ->
    %% The main process collects up to N replies (spawn, memory, timers): keep its message queue
    %% off-heap, as an Erlang programmer would for a collector (3x faster spawn here).
    process_flag(message_queue_data, off_heap),
    P = #{n => list_to_integer(N), actors => list_to_integer(A), depth => list_to_integer(D),
          max_ms => list_to_integer(MaxMs), seed => list_to_integer(Seed),
          base_ms => list_to_integer(BaseMs)},
    {WallNs, Check, Extra} = run(list_to_atom(W), P),
    ExtraStr = lists:flatten([io_lib:format(" ~s=~p", [K, V]) || {K, V} <- Extra]),
    io:format("RESULT otp=~s wall_ns=~b check=~b~s~n",
              [erlang:system_info(otp_release), WallNs, Check, ExtraStr]),
    halt(0);
main(_) ->
    io:format(standard_error, "usage: colonybench.escript WORKLOAD N ACTORS DEPTH MAXDELAY_MS SEED [BASEDELAY_MS]~n", []),
    halt(2).

now_ns() -> erlang:monotonic_time(nanosecond).

timed(F) ->
    T0 = now_ns(),
    R = F(),
    {now_ns() - T0, R}.

%% ---- pingpong: 2 processes, N round trips; the pinger sums the echoed values.
run(pingpong, #{n := N}) ->
    Main = self(),
    {Wall, Sum} = timed(fun() ->
        Pong = spawn(fun pong/0),
        spawn(fun() -> Main ! {done, ping(Pong, 0, N, 0)} end),
        receive {done, S} -> S end
    end),
    {Wall, Sum, []};

%% ---- threadring: ACTORS processes in a ring, token N; whoever receives 0 reports its index.
run(threadring, #{n := N, actors := A}) ->
    Main = self(),
    {Wall, Idx} = timed(fun() ->
        Pids = [spawn(fun() -> receive {next, Next} -> ring(I, Next, Main) end end)
                || I <- lists:seq(0, A - 1)],
        [P ! {next, Nx} || {P, Nx} <- lists:zip(Pids, tl(Pids) ++ [hd(Pids)])],
        hd(Pids) ! N,
        receive {ring_done, I} -> I end
    end),
    {Wall, Idx, []};

%% ---- counting: the main process sends 1..N to a counter, then calls for the total.
run(counting, #{n := N}) ->
    {Wall, Total} = timed(fun() ->
        C = spawn(fun() -> counter(0) end),
        count_send(C, 1, N),
        C ! {get, self()},
        receive {total, T} -> T end
    end),
    {Wall, Total, []};

%% ---- forkjoin: ACTORS workers each receive N messages, sent round-robin by the main process.
run(forkjoin, #{n := M, actors := A}) ->
    Main = self(),
    {Wall, Processed} = timed(fun() ->
        Ws = [spawn(fun() -> worker(M, Main) end) || _ <- lists:seq(1, A)],
        fj_send(Ws, 0, M),
        fj_collect(A, 0)
    end),
    {Wall, Processed, []};

%% ---- spawn: N processes, each receives its number, reports it and exits.
run(spawn, #{n := N}) ->
    Main = self(),
    {Wall, Sum} = timed(fun() ->
        spawn_n(Main, 0, N),
        collect_sum(N, 0)
    end),
    {Wall, Sum, []};

%% ---- skynet: 10-ary tree, 10^DEPTH leaves reply their number, parents sum.
run(skynet, #{depth := D}) ->
    Main = self(),
    Size = pow10(D),
    {Wall, Sum} = timed(fun() ->
        spawn(fun() -> skynet(0, Size, Main) end),
        receive {sky, S} -> S end
    end),
    {Wall, Sum, []};

%% ---- memory: N idle processes; bytes per process from erlang:memory(processes), minus the
%% growth of this (the measuring) process itself.
run(memory, #{n := N}) ->
    Main = self(),
    garbage_collect(),
    Base = proc_mem(),
    T0 = now_ns(),
    Pids = [spawn(fun() -> Main ! started, receive go -> Main ! ack end end) || _ <- lists:seq(1, N)],
    wait_n(started, N),
    Wall = now_ns() - T0,
    garbage_collect(),
    Bytes = proc_mem() - Base,
    [P ! go || P <- Pids],
    wait_n(ack, N),
    {Wall, N, [{bytes_per_actor, Bytes / N}]};

%% ---- timers: N processes each arm one timer of 1..MAXDELAY ms (the same LCG sequence as the Go
%% side) and report how late it fired.
run(timers, #{n := N, max_ms := MaxMs, seed := Seed}) ->
    Main = self(),
    Delays = timer_delays(Seed, MaxMs, N),
    {Wall, Lates} = timed(fun() ->
        [spawn(fun() -> timer_actor(Dl, Main) end) || Dl <- Delays],
        collect_list(N, [])
    end),
    Sorted = lists:sort(Lates),
    P99 = lists:nth(min(N, ceil(0.99 * N)), Sorted),
    {Wall, length(Lates), [{p99_late_ns, P99}, {max_late_ns, lists:last(Sorted)}]};

%% ---- armcancel: send_after N timers to 1000 idle processes, then cancel_timer each; counts
%% the cancels that found the timer pending.
run(armcancel, #{n := N, actors := A, max_ms := MaxMs, seed := Seed, base_ms := B}) ->
    Dests = list_to_tuple([spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, A)]),
    Delays = [B + D || D <- timer_delays(Seed, MaxMs, N)],
    {Wall, Cancelled} = timed(fun() ->
        Refs = arm_each(Delays, Dests, 0, A, []),
        length([R || R <- Refs, erlang:cancel_timer(R) =/= false])
    end),
    [D ! stop || D <- tuple_to_list(Dests)],
    {Wall, Cancelled, []};

%% ---- delays (a self-check for the tests, not a workload): sum of (I * delay I), I from 1.
run(delays, #{n := N, max_ms := MaxMs, seed := Seed}) ->
    Ds = timer_delays(Seed, MaxMs, N),
    {0, lists:sum([I * D || {I, D} <- lists:zip(lists:seq(1, N), Ds)]), []};

%% ---- callrt: a client process makes N gen_server:call round trips; the server answers V+1.
run(callrt, #{n := N}) ->
    Main = self(),
    {Wall, Sum} = timed(fun() ->
        {ok, S} = gen_server:start(?MODULE, [], []),
        spawn(fun() -> Main ! {calls, call_loop(S, 0, N, 0)} end),
        receive {calls, Sum0} -> Sum0 end
    end),
    {Wall, Sum, []}.

%% pingpong
arm_each([], _, _, _, Acc) -> Acc;
arm_each([D | Ds], Dests, I, A, Acc) ->
    R = erlang:send_after(D, element(I rem A + 1, Dests), fire),
    arm_each(Ds, Dests, I + 1, A, [R | Acc]).

pong() ->
    receive
        {ping, V, From} -> From ! {pong, V}, pong();
        stop -> ok
    end.

ping(Pong, I, N, Sum) when I < N ->
    Pong ! {ping, I, self()},
    receive {pong, V} -> ping(Pong, I + 1, N, Sum + V) end;
ping(Pong, _, _, Sum) ->
    Pong ! stop,
    Sum.

%% threadring: token > 0 is passed on decremented; 0 ends the ring; stop circulates once.
ring(I, Next, Main) ->
    receive
        0 -> Main ! {ring_done, I}, Next ! stop, ring(I, Next, Main);
        stop -> Next ! stop;
        T -> Next ! T - 1, ring(I, Next, Main)
    end.

%% counting
counter(Total) ->
    receive
        {add, V} -> counter(Total + V);
        {get, From} -> From ! {total, Total}
    end.

count_send(_, I, N) when I > N -> ok;
count_send(C, I, N) -> C ! {add, I}, count_send(C, I + 1, N).

%% forkjoin
worker(M, Main) -> worker(0, M, Main).
worker(M, M, Main) -> Main ! {fj_done, M};
worker(K, M, Main) -> receive _ -> worker(K + 1, M, Main) end.

fj_send(_, M, M) -> ok;
fj_send(Ws, I, M) -> [W ! I || W <- Ws], fj_send(Ws, I + 1, M).

fj_collect(0, Acc) -> Acc;
fj_collect(K, Acc) -> receive {fj_done, C} -> fj_collect(K - 1, Acc + C) end.

%% spawn
spawn_n(_, N, N) -> ok;
spawn_n(Main, I, N) ->
    P = spawn(fun() -> receive V -> Main ! {v, V} end end),
    P ! I,
    spawn_n(Main, I + 1, N).

collect_sum(0, Acc) -> Acc;
collect_sum(K, Acc) -> receive {v, V} -> collect_sum(K - 1, Acc + V) end.

%% skynet
skynet(Num, 1, Parent) -> Parent ! {sky, Num};
skynet(Num, Size, Parent) ->
    Self = self(),
    Child = Size div 10,
    [spawn(fun() -> skynet(Num + I * Child, Child, Self) end) || I <- lists:seq(0, 9)],
    Parent ! {sky, sky_sum(10, 0)}.

sky_sum(0, Acc) -> Acc;
sky_sum(K, Acc) -> receive {sky, V} -> sky_sum(K - 1, Acc + V) end.

pow10(0) -> 1;
pow10(D) -> 10 * pow10(D - 1).

%% memory
proc_mem() ->
    {memory, Self} = process_info(self(), memory),
    erlang:memory(processes) - Self.

wait_n(_, 0) -> ok;
wait_n(Tag, K) -> receive Tag -> wait_n(Tag, K - 1) end.

%% timers: the LCG of timerDelays in workloads.go, bit for bit.
-define(LCG_A, 6364136223846793005).
-define(LCG_C, 1442695040888963407).
-define(MASK64, 16#FFFFFFFFFFFFFFFF).
timer_delays(Seed, MaxMs, N) ->
    X0 = (Seed * ?LCG_A + ?LCG_C) band ?MASK64,
    timer_delays(X0, max(1, MaxMs), N, []).
timer_delays(_, _, 0, Acc) -> lists:reverse(Acc);
timer_delays(X, MaxMs, K, Acc) ->
    X1 = (X * ?LCG_A + ?LCG_C) band ?MASK64,
    timer_delays(X1, MaxMs, K - 1, [1 + (X1 bsr 33) rem MaxMs | Acc]).

timer_actor(DelayMs, Main) ->
    Deadline = now_ns() + DelayMs * 1000000,
    erlang:send_after(DelayMs, self(), fire),
    receive fire -> Main ! {late, now_ns() - Deadline} end.

collect_list(0, Acc) -> Acc;
collect_list(K, Acc) -> receive {late, L} -> collect_list(K - 1, [L | Acc]) end.

%% callrt: this module is also the gen_server.
call_loop(_, N, N, Sum) -> Sum;
call_loop(S, I, N, Sum) -> call_loop(S, I + 1, N, Sum + gen_server:call(S, I, 5000)).

init([]) -> {ok, nostate}.
handle_call(V, _From, State) -> {reply, V + 1, State}.
handle_cast(_, State) -> {noreply, State}.

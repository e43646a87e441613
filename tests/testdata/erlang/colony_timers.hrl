%% colony_timers.hrl: helpers of the timer and message-order scenarios
%% (timers/), included after colony_trace.hrl.
%%
%% Timer refs are named t1, t2, ... in the order the scenario arms them
%% (through send_after/3 or start_timer/3 below, printed or not), in the
%% same ETS table as pids and monitor refs. A remaining time is never
%% printed as a number, which would depend on timing: left/2 prints it as
%% the class ms_left when it lies in 0..Delay.

%% send_after(Delay, Dest, Msg) is erlang:send_after/3 with the ref named.
send_after(Delay, Dest, Msg) ->
    Ref = erlang:send_after(Delay, Dest, Msg),
    N = ets:update_counter(colony_names, timercount, 1, {timercount, 0}),
    ets:insert(colony_names, {Ref, list_to_atom("t" ++ integer_to_list(N))}),
    Ref.

%% start_timer(Delay, Dest, Msg) is erlang:start_timer/3 with the ref named
%% like send_after/3's (one count for both): Dest later gets
%% {timeout, Ref, Msg}, which prints as {timeout,t<N>,Msg}.
start_timer(Delay, Dest, Msg) ->
    Ref = erlang:start_timer(Delay, Dest, Msg),
    N = ets:update_counter(colony_names, timercount, 1, {timercount, 0}),
    ets:insert(colony_names, {Ref, list_to_atom("t" ++ integer_to_list(N))}),
    Ref.

%% left(Result, Delay) classifies the result of cancel_timer/read_timer:
%% false, ms_left for a remaining time in 0..Delay ms, or {bad_left, L}.
left(false, _) -> false;
left(L, Delay) when is_integer(L), L >= 0, L =< Delay -> ms_left;
left(L, _) -> {bad_left, L}.

%% cancel(T, Delay) prints "cancel_timer <t> false|ms_left".
cancel(T, Delay) -> ev([cancel_timer, T, left(erlang:cancel_timer(T), Delay)]).

%% read(T, Delay) prints "read_timer <t> false|ms_left".
read(T, Delay) -> ev([read_timer, T, left(erlang:read_timer(T), Delay)]).

%% take(N) takes the next N messages of main's mailbox, in order.
take(0) -> [];
take(N) -> receive M -> [M | take(N - 1)] end.

%% seqs(Senders, Ms) prints "seq <p> [...]" for each sender: the payloads
%% of the {P, I} messages in Ms, in receipt order.
seqs(Senders, Ms) ->
    [ev([seq, P, [I || {Q, I} <- Ms, Q =:= P]]) || P <- Senders],
    ok.

%% settled_mailbox() is mailbox/0 after a receive that matches nothing,
%% with after 0. On OTP 25 process_info(self(), messages) leaves out
%% messages still in the process's outer signal queue, and a timer message
%% that arrived while the process waited in a receive without clauses
%% (timer:sleep/1, receive after T) stays there until the next receive
%% looks at the mailbox.
settled_mailbox() ->
    receive '$colony_no_such_message' -> ok after 0 -> ok end,
    mailbox().

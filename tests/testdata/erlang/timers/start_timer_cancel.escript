#!/usr/bin/env escript
%% start_timer_cancel: read_timer and cancel_timer on a start_timer ref: a pending timer shows its time left and, cancelled, never delivers (by main or by another process); a second cancel and a read afterwards say false; once its message is queued both say false and the message stays.
%%
%% "cancel_timer_by P T R" is cancel/2's line for a cancel_timer made by P.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    T1 = start_timer(100, self(), cancelled),
    read(T1, 100),
    cancel(T1, 100),
    read(T1, 100),
    cancel(T1, 100),
    A = spawn_loop(a),
    T2 = start_timer(100, self(), by_a),
    ev([cancel_timer_by, A, T2, call(A, fun() -> left(erlang:cancel_timer(T2), 100) end)]),
    read(T2, 100),
    %% The marker's deadline is well after T1's and T2's: had either
    %% fired, its message would be in the mailbox before the marker.
    start_timer(250, self(), marker),
    recv(),
    T4 = start_timer(10, self(), fired),
    await_mailbox(1),
    read(T4, 10),
    cancel(T4, 10),
    settled_mailbox().

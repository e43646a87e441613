#!/usr/bin/env escript
%% start_timer_stale: a start_timer cancelled too late (its message already queued: cancel_timer says false) still delivers; the receiver, which re-armed, tells the stale message from the current one by its ref. A timer cancelled in time never delivers.
%%
%% "tick T stale|current" prints a {timeout, T, tick} main took, and
%% whether T is the timer main armed last.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    T1 = start_timer(10, self(), tick),
    await_mailbox(1),
    cancel(T1, 10),
    T2 = start_timer(100, self(), tick),
    take_tick(T2),
    take_tick(T2),
    T3 = start_timer(100, self(), tick),
    cancel(T3, 100),
    %% T4's deadline is well after T3's: had T3 fired, its message would
    %% come first.
    T4 = start_timer(250, self(), tick),
    take_tick(T4),
    settled_mailbox().

take_tick(Current) ->
    receive
        {timeout, T, tick} when T =:= Current -> ev([tick, T, current]);
        {timeout, T, tick} -> ev([tick, T, stale])
    end.

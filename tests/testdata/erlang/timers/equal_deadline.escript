#!/usr/bin/env escript
%% equal_deadline: five timers armed in sequence with the same 50 ms delay all deliver; their order is not asserted (sorted).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    [send_after(50, self(), {n, I}) || I <- lists:seq(1, 5)],
    %% OTP documents no order for timers that expire together, so the
    %% messages are printed sorted.
    ev([recv_sorted, main, lists:sort(take(5))]),
    settled_mailbox().

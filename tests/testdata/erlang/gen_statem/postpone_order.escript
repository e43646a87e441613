#!/usr/bin/env escript
%% postpone_order: postponed events are retried after each state change, oldest first, behind the events postponed before them and before the mailbox; keep_state and repeat_state retry none.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {e1, [{in, a, [postpone]}, {in, b, [postpone]}]}),
    sm_cast(S, {e2, [{in, a, [postpone]}]}),
    sm_cast(S, {e3, [{in, a, [postpone]}, {in, b, [postpone]}]}),
    sm_cast(S, {k, [keep]}),
    sm_cast(S, {r, [repeat]}),
    sm_cast(S, {go_b, [{next, b}]}),
    sm_cast(S, {e4, [{in, b, [postpone]}]}),
    sm_cast(S, {go_c, [{next, c}]}),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 16),
    await_down(M),
    mailbox().

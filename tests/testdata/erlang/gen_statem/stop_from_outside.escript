#!/usr/bin/env escript
%% stop_from_outside: gen_statem:stop runs terminate with the reason, trapping exits or not, in the state the machine is in.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{}),
    M = mon(S),
    sm_cast(S, {go_b, [{next, b}]}),
    await_sm(sm),
    ev([stop, S, gen_statem:stop(S)]),
    await_sm(sm),
    await_down(M),
    S2 = start_sm(s2, #{trap => true}),
    M2 = mon(S2),
    ev([stop, S2, gen_statem:stop(S2, {shutdown, x}, 5000)]),
    await_sm(s2),
    await_down(M2),
    mailbox().

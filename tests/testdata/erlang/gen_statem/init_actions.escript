#!/usr/bin/env escript
%% init_actions: init's actions run after the start returns, after the first enter call: inserted events in order, and a zero state timeout after them; the inserted events cancel init's event timeout.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    S = start_sm(sm, #{enter => [],
                       init_actions => [{timeout, 10000, t}, {ne, internal, i1},
                                        {state_timeout, 0, z}, {ne, internal, i2}]}),
    M = mon(S),
    await_sm(sm, 4),
    sm_cast(S, {stop, [{stop, normal}]}),
    await_sm(sm, 2),
    await_down(M),
    mailbox().

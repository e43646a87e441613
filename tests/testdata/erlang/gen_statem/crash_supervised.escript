#!/usr/bin/env escript
%% crash_supervised: a crash in a state callback runs terminate with the state before it, the supervisor restarts the machine, and the supervisor's shutdown reaches terminate of a machine that traps exits.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    Flags = #{strategy => one_for_one, intensity => 1, period => 5},
    Children = [#{id => sm, start => {?MODULE, start_sm_link, [sm, #{trap => true}]}}],
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, Flags, Children}),
    unlink(Sup),
    name(Sup, sup),
    MS = mon(Sup),
    await_sm(sm),
    S = pid(sm),
    M = mon(S),
    sm_cast(S, {boom, [{next, b}, crash]}),
    await_sm(sm, 2),
    await_sm_down(M),
    await_sm(sm),
    S2 = pid(sm),
    M2 = mon(S2),
    sm_call(S2, {ping, [{reply, pong}, {next, b}]}, 5000),
    await_sm(sm),
    exit(Sup, shutdown),
    await_sm(sm),
    await_down(M2),
    await_down(MS),
    mailbox().

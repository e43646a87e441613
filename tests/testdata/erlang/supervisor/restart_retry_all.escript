#!/usr/bin/env escript
%% restart_retry_all: under one_for_all, a restart that fails at a later sibling leaves the ones before it running, the failed one restarting and the ones after it stopped; each retry restarts them all; restart_child of a stopped one works meanwhile (and the next retry stops it again); once the start succeeds all run.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    %% w1 and w3 are quiet: each retry stops and starts w1 a number of times
    %% that depends on timing.
    Sup = start_sup(sup, #{strategy => one_for_all, intensity => 1000000, period => 3600},
                    [worker(w1, permanent, #{quiet => true}),
                     worker(w2, permanent, #{init => switch}),
                     worker(w3, permanent, #{quiet => true})]),
    await_start(w2),
    switch(w2, {stop, boom}),
    crash(w1, boom),
    await_child(Sup, w2, restarting),
    children(Sup),
    counts(Sup),
    ev([restart_child, w3, supervisor:restart_child(Sup, w3)]),
    await_child(Sup, w3, undefined),
    switch(w2, ok),
    await_start(w2),
    await_child(Sup, w3, running),
    children(Sup),
    counts(Sup),
    stop_sup(Sup),
    mailbox().

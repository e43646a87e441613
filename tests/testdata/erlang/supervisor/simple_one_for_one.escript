#!/usr/bin/env escript
%% simple_one_for_one: dynamic children from one template; a crashed permanent child restarts with its start arguments; children stop (unordered) when the supervisor stops.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Tmpl = #{id => dyn, start => {gen_server, start_link, [?MODULE]},
             restart => permanent, type => worker, modules => [worker]},
    Sup = start_sup(sup, #{strategy => simple_one_for_one, intensity => 3, period => 3600}, [Tmpl]),
    [start_dyn(Sup, D) || D <- [d1, d2, d3]],
    crash(d2, boom),
    await_start(d2),
    counts(Sup),
    children(Sup),
    %% The supervisor stops its dynamic children all at once, in no order;
    %% they stay quiet on shutdown and main takes their DOWNs in a set order.
    Ms = [mon(pid(D)) || D <- [d1, d2, d3]],
    stop_sup(Sup),
    [await_down(M) || M <- Ms],
    mailbox().

start_dyn(Sup, Id) ->
    R = supervisor:start_child(Sup, [{worker, Id, #{quiet_shutdown => true}}, []]),
    await_start(Id),
    ev([start_child, Sup, Id, R]).

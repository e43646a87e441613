#!/usr/bin/env escript
%% shutdown_linked: a child told to stop is still linked to its supervisor (OTP 25's shutdown/2 monitors, signals, waits for the DOWN and only then unlinks): by terminate_child, at its supervisor's stop, and a dynamic child at its simple_one_for_one supervisor's stop.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1, permanent, #{links => true}),
                     worker(w2, permanent, #{links => true})]),
    [await_start(W) || W <- [w1, w2]],
    ev([terminate_child, w1, supervisor:terminate_child(Sup, w1)]),
    stop_sup(Sup),
    Tmpl = #{id => dyn, start => {gen_server, start_link, [?MODULE]},
             restart => temporary, type => worker, modules => [worker]},
    Dyn = start_sup(dyn, #{strategy => simple_one_for_one, intensity => 1, period => 3600}, [Tmpl]),
    R = supervisor:start_child(Dyn, [{worker, d, #{links => true}}, []]),
    await_start(d),
    ev([start_child, Dyn, d, R]),
    stop_sup(Dyn),
    mailbox().

#!/usr/bin/env escript
%% significant_any: with auto_shutdown any_significant, a significant transient child's normal exit shuts the supervisor down; an abnormal exit restarts it; significant permanent children are refused.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Flags = #{strategy => one_for_one, intensity => 3, period => 3600, auto_shutdown => any_significant},
    Sig = (worker(s1, transient))#{significant => true},
    Sup = start_sup(sup, Flags, [worker(w1), Sig, worker(w3)]),
    [await_start(W) || W <- [w1, s1, w3]],
    crash(s1, boom),
    await_start(s1),
    M = mon(Sup),
    crash(s1, normal),
    await_down(M),
    await_exit(Sup),
    Bad = (worker(p1))#{significant => true},
    {error, E} = supervisor:start_link(?MODULE, {sup, sup2, Flags, [Bad]}),
    ev([start_link, sup2, error, element(1, E)]),
    receive {'EXIT', _, _} -> ok end,
    mailbox().

#!/usr/bin/env escript
%% significant_all: with auto_shutdown all_significant, the supervisor shuts down only once every significant child has exited for good (a transient one with normal, shutdown or {shutdown, _}, a temporary one with any reason).
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Flags = #{strategy => one_for_one, intensity => 3, period => 3600, auto_shutdown => all_significant},
    Sup = start_sup(sup, Flags, [worker(w1),
                                 (worker(s1, transient))#{significant => true},
                                 (worker(s2, temporary))#{significant => true}]),
    [await_start(W) || W <- [w1, s1, s2]],
    crash(s1, {shutdown, x}),
    await_child(Sup, s1, undefined),
    children(Sup),
    M = mon(Sup),
    crash(s2, boom),
    await_down(M),
    await_exit(Sup),
    mailbox().

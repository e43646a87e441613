#!/usr/bin/env escript
%% init_recomputed: a supervisor's init/1 runs again when its own supervisor restarts it, and the spec it returns then is the one used: a child supervisor whose n-th init starts n workers gives up on a crash and comes back with two.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Strict = #{strategy => one_for_one, intensity => 0, period => 3600},
    Top = start_sup(top, #{strategy => one_for_one, intensity => 3, period => 3600}, [dynsub(sub, Strict)]),
    await_start(sub1),
    M = mon(pid(sub)),
    crash(sub1, boom),
    await_start(sub1),
    await_start(sub2),
    await_down(M),
    children(pid(sub)),
    stop_sup(Top),
    mailbox().

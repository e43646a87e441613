#!/usr/bin/env escript
%% cascade_intensity: a child supervisor that exceeds its intensity dies with shutdown; its death is a restart the parent cannot afford either (intensity 0), so the parent stops its other children and exits with shutdown too.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Strict = #{strategy => one_for_one, intensity => 0, period => 3600},
    Top = start_sup(top, Strict,
                    [worker(w1), subsup(sub, Strict, [worker(a1), worker(a2)]), worker(w3)]),
    [await_start(W) || W <- [w1, a1, a2, w3]],
    Ms = [mon(P) || P <- [Top, pid(sub)]],
    crash(a1, boom),
    [await_down(M) || M <- Ms],
    await_exit(Top),
    mailbox().

#!/usr/bin/env escript
%% which_children: the child list of a static supervisor: running pids, an ignored child (undefined), a child supervisor; count_children counts both kinds.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Sub = #{strategy => one_for_one, intensity => 1, period => 3600},
    Sup = start_sup(sup, #{strategy => one_for_one, intensity => 1, period => 3600},
                    [worker(w1), worker(w2, permanent, #{init => ignore}),
                     subsup(sub, Sub, [worker(x1), worker(x2, temporary)]),
                     worker(w3, transient)]),
    [await_start(W) || W <- [w1, x1, x2, w3]],
    %% Not sorted: OTP lists the children of a static supervisor in reverse
    %% start order.
    ev([which_children, Sup, canon(supervisor:which_children(Sup))]),
    counts(Sup),
    ev([which_children, sub, canon(supervisor:which_children(pid(sub)))]),
    counts(pid(sub)),
    stop_sup(Sup),
    mailbox().

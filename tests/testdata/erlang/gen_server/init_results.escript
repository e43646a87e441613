#!/usr/bin/env escript
%% init_results: start_link returns {error, R} when init stops with R, ignore when it ignores, and {error, timeout} when init outlives the start timeout; a trapping caller gets the 'EXIT' of the first two (OTP 25), not of the killed one.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    start_link_srv(a, #{init => {stop, boom}}),
    await_exit(pid(a)),
    start_link_srv(b, #{init => ignore}),
    await_exit(pid(b)),
    start_link_srv(c, #{init => block}, [{timeout, 50}]),
    D = start_link_srv(d, #{}),
    gen_call(D, ping),
    mailbox().

#!/usr/bin/env escript
%% after_zero: receive ... after 0 times out at once on an empty mailbox or one with no match (which it leaves alone), and takes a match that is there.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    receive M0 -> ev([recv, main, M0]) after 0 -> ev([timeout, main]) end,
    self() ! x,
    receive y -> ev([recv, main, y]) after 0 -> ev([timeout, main]) end,
    self() ! y,
    receive y -> ev([recv, main, y]) after 0 -> ev([timeout, main]) end,
    receive M1 -> ev([recv, main, M1]) after 0 -> ev([timeout, main]) end,
    receive M2 -> ev([recv, main, M2]) after 0 -> ev([timeout, main]) end,
    settled_mailbox().

#!/usr/bin/env escript
%% receive_timeout: a receive whose timeout runs out returns, and the message it waited for, arriving later, is received by the next receive; a timer message that arrives during timer:sleep waits in the mailbox.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    send_after(150, self(), late),
    receive late -> ev([recv, main, late]) after 20 -> ev([timeout, main]) end,
    receive late -> ev([recv, main, late]) end,
    send_after(20, self(), during),
    timer:sleep(100),
    settled_mailbox().

#!/usr/bin/env escript
%% selective_receive: a receive that matches a later message leaves the earlier ones in the mailbox, in order, for later receives; a timer message that arrives during a selective wait is kept too.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

main(_) ->
    start_trace(),
    [self() ! M || M <- [a, b, c, d]],
    receive c -> ev([recv, main, c]) end,
    receive b -> ev([recv, main, b]) end,
    recv(),
    send_after(20, self(), early),
    send_after(100, self(), wanted),
    receive wanted -> ev([recv, main, wanted]) end,
    settled_mailbox().

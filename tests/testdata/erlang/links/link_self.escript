#!/usr/bin/env escript
%% link_self: link(self()) is a no-op that returns true; the process has no links after it.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    ev([link, A, A, call(A, fun() -> link(self()) end)]),
    ev([links, A, call(A, fun() -> element(2, process_info(self(), links)) end)]),
    ev([unlink, A, A, call(A, fun() -> unlink(self()) end)]),
    alive(A),
    mailbox().

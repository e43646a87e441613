#!/usr/bin/env escript
%% normal_no_propagate: a normal exit does not kill a linked non-trapping peer.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    B = spawn_loop(b),
    true = call(A, fun() -> link(B) end),
    Mb = mon(B),
    cast(B, fun() -> exit(normal) end),
    await_down(Mb),
    %% There is no order between b's exit signal to a and main's call to a,
    %% so wait until a's link to b is gone: then a has handled the signal.
    wait_unlinked(A),
    alive(A),
    ev([links, A, call(A, fun() -> element(2, process_info(self(), links)) end)]),
    mailbox().

wait_unlinked(A) ->
    case call(A, fun() -> element(2, process_info(self(), links)) end) of
        [] -> ok;
        _ -> receive after 1 -> wait_unlinked(A) end
    end.

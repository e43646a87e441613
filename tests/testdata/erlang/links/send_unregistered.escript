#!/usr/bin/env escript
%% send_unregistered: sending to a name nobody holds (never held, or freed by death) is badarg in the sender.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    ev([send, nobody, sent(fun() -> nobody ! hi end)]),
    ev([send, nobody, sent(fun() -> erlang:send(nobody, hi) end)]),
    A = spawn_named(a, fun() -> receive die -> exit(normal) end end),
    true = register(worker, A),
    Ma = mon(A),
    ev([send, worker, sent(fun() -> worker ! die end)]),
    await_down(Ma),
    ev([send, worker, sent(fun() -> worker ! hi end)]),
    %% A send to a dead pid (not a name) is silently dropped.
    ev([send, A, sent(fun() -> A ! hi end)]),
    mailbox().

%% sent(F) is ok if the send F returned, else the error (badarg).
sent(F) ->
    case try_(F) of
        badarg -> badarg;
        _ -> ok
    end.

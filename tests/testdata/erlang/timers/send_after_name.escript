#!/usr/bin/env escript
%% send_after_name: send_after to a registered name resolves it when the timer fires: the holder gets it; a holder killed and replaced under the name meanwhile means the new one gets it; a name nobody holds then gets nothing (the timer is no longer pending); a pending one is cancelled as any other.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

%% await_fired(T) polls until timer T is no longer pending, for at most
%% about 5 s: a fixed sleep past its delay was outlasted by a late timer on
%% a busy machine.
await_fired(T) -> await_fired(T, 5000).
await_fired(_, 0) -> ok;
await_fired(T, N) ->
    case erlang:read_timer(T) of
        false -> ok;
        _ -> receive after 1 -> await_fired(T, N - 1) end
    end.

main(_) ->
    start_trace(),
    A = spawn_loop(a),
    register(ticker, A),
    send_after(20, ticker, one),
    await_fwd(A),
    send_after(150, ticker, two),
    Ma = mon(A),
    exit(A, kill),
    await_down(Ma),
    B = spawn_loop(b),
    register(ticker, B),
    await_fwd(B),
    T3 = send_after(20, nobody, three),
    read(T3, 20),
    await_fired(T3),
    read(T3, 20),
    T4 = send_after(5000, ticker, never),
    cancel(T4, 5000),
    settled_mailbox().

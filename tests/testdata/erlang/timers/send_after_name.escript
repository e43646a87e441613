#!/usr/bin/env escript
%% send_after_name: send_after to a registered name resolves it when the timer fires: the holder gets it; a holder killed and replaced under the name meanwhile means the new one gets it; a name nobody holds then gets nothing (the timer is no longer pending); a pending one is cancelled as any other.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_timers.hrl").

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
    timer:sleep(100),
    read(T3, 20),
    T4 = send_after(5000, ticker, never),
    cancel(T4, 5000),
    settled_mailbox().

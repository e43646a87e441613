#!/usr/bin/env escript
%% link_monitor_order: a process both linked to a trapping process and monitored by it sends it its messages, then its 'EXIT', then its DOWN, in that order, whichever of the link and the monitor was made first and however it dies (exit(boom), killed, normal); so once the DOWN has been taken the 'EXIT' is already in the mailbox (a receive ... after 0 finds it).
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Main = self(),
    A = spawn_loop(a),
    true = link(A),
    mon(A),
    cast(A, fun() -> Main ! {a, 1}, exit(boom) end),
    recv(),
    recv(),
    recv(),
    B = spawn_loop(b),
    mon(B),
    true = link(B),
    true = exit(B, kill),
    recv(),
    recv(),
    C = spawn_loop(c),
    true = link(C),
    Mc = mon(C),
    cast(C, fun() -> exit(normal) end),
    await_down(Mc),
    receive
        {'EXIT', C, R} -> ev([exit, self(), C, R])
    after 0 -> ev([timeout, main])
    end,
    mailbox().

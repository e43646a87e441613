#!/usr/bin/env escript
%% exit_self_signal: exit(self(), boom) takes effect before exit/2 returns: a non-trapping caller dies with boom and what it would have sent next is never sent; a trapping caller gets {'EXIT', Self, boom} as a message between the messages it sent itself before and after the call, in that order.
-mode(compile).
-include("../colony_trace.hrl").

main(_) ->
    start_trace(),
    Main = self(),
    A = spawn_loop(a),
    Ma = mon(A),
    cast(A, fun() -> Main ! {a, before}, exit(self(), boom), Main ! {a, after_exit} end),
    recv(),
    await_down(Ma),
    B = spawn_loop(b),
    false = call(B, fun() -> process_flag(trap_exit, true) end),
    cast(B, fun() -> self() ! m1, exit(self(), boom), self() ! m2 end),
    await_fwd(B),
    await_fwd(B),
    await_fwd(B),
    alive(B),
    mailbox().

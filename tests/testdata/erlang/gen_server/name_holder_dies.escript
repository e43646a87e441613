#!/usr/bin/env escript
%% name_holder_dies: a call by name whose server dies while it holds the call exits the caller with the server's exit reason (killed, boom), not noproc, even when another server has taken the name meanwhile: the call is not passed on; the next call by name reaches the new holder.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    S1 = start_srv(s1, #{reg => srv}),
    M1 = mon(S1),
    %% k kills s1 once s1 holds main's call, waits for its death, starts
    %% s2 under the same name and tells main.
    K = spawn_named(k, fun() ->
        receive {holding, S} -> ok end,
        Mk = erlang:monitor(process, S),
        exit(S, kill),
        receive {'DOWN', Mk, process, _, _} -> ok end,
        start_srv(s2, #{reg => srv}),
        pid(main) ! {restarted, self()}
    end),
    gen_call(srv, {hold_notify, K}),
    await_down(M1),
    receive {restarted, K} -> ok end,
    gen_call(srv, whoami),
    S2 = pid(s2),
    M2 = mon(S2),
    gen_call(srv, {stop, boom}),
    await_gs(S2),
    await_down(M2),
    mailbox().

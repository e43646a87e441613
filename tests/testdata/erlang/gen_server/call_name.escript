#!/usr/bin/env escript
%% call_name: gen_server:call(Name, Req) to a server started with {local, Name} is answered by that server, from main or another process; gen_server:cast(Name, Msg) returns ok and Name ! Msg does not raise; casts, sends and calls by name from one sender reach the callbacks in send order; a process that calls the name it holds exits with calling_self.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_gensrv.hrl").

main(_) ->
    start_trace(),
    S = start_srv(s1, #{reg => srv}),
    gen_call(srv, ping),
    gen_call(srv, whoami),
    gen_cast(srv, {note, 1}),
    srv ! hello,
    ev([send, srv, ok]),
    gen_call(srv, {echo, x}),
    await_gs(S),
    await_gs(S),
    A = spawn_loop(a),
    ev([call, A, call(A, fun() -> gen_server:call(srv, whoami) end)]),
    %% a calls the name it holds itself.
    ev([call, A, call(A, fun() ->
        register(me, self()),
        try gen_server:call(me, ping)
        catch exit:{R, {gen_server, call, _}} -> {exit, R}
        end
    end)]),
    M = mon(S),
    gen_cast(srv, {stop, normal}),
    await_gs(S),
    await_down(M),
    mailbox().

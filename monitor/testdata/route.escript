#!/usr/bin/env escript
%% Prints, for every exit-signal scenario Route covers, what OTP does with it:
%%   Kind Link Trapping FromSelf Action
%% TestRouteMatchesOTP runs it when escript is installed and compares each line
%% with monitor.Route. Kind is the Go classification of the reason sent.
main(_) ->
    [row(K, Link, Trap, Self)
     || K <- [normal, kill, foo, killed, shutdown],
        Link <- [false, true], Trap <- [false, true], Self <- [false, true],
        not (Link andalso Self)],
    ok.

kind(normal) -> "Normal";
kind(kill) -> "Kill";
kind(_) -> "Other".

row(R, Link, Trap, Self) ->
    Me = self(),
    {P, Ref} = spawn_monitor(fun() ->
        process_flag(trap_exit, Trap),
        if
            Link -> %% a linked peer exits with R itself (exit/1): a link exit signal
                Q = spawn_link(fun() -> receive go -> exit(R) end end),
                Q ! go;
            Self -> exit(self(), R);
            true -> Me ! {ready, self()}
        end,
        receive M -> Me ! {got, self(), M} after 300 -> Me ! {nomsg, self()} end
    end),
    if
        not Link andalso not Self -> receive {ready, P} -> exit(P, R) end;
        true -> ok
    end,
    Action = receive
        {got, P, {'EXIT', _, R}} -> "DeliverExit";
        {nomsg, P} -> "Ignore";
        {'DOWN', Ref, process, P, killed} when R =:= kill -> "DieKilled";
        {'DOWN', Ref, process, P, R} -> "Die";
        Other -> io_lib:format("Unexpected:~p", [Other])
    end,
    erlang:demonitor(Ref, [flush]),
    io:format("~s ~s ~s ~s ~s~n", [kind(R), Link, Trap, Self, Action]).

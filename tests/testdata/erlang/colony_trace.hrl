%% colony_trace.hrl: helpers shared by the differential-test escripts.
%%
%% Every scenario includes this file (-include("../colony_trace.hrl")) and
%% prints its trace through ev/1 only, so that the output follows the format
%% in tests/erldiff/doc.go: one event per line, words separated by one space,
%% processes and monitor refs named symbolically, never raw pids or refs.
%%
%% Names live in a public ETS table owned by the main process, so any process
%% of the scenario can format a term that mentions another process:
%%   {Pid, Name}         pid -> symbolic name (several pids may share a name:
%%                       a restarted supervisor child keeps its id)
%%   {{pid, Name}, Pid}  name -> latest pid with that name
%%   {Ref, Name}         monitor ref -> m1, m2, ... in creation order
%% A pid or ref with no name prints as unnamed_pid / unnamed_ref, which the
%% Go harness rejects.

%% export_all: the escript module is also the supervisor and gen_server
%% callback module (colony_sup.hrl), whose callbacks must be exported.
-compile([export_all, nowarn_export_all]).


%% start_trace/0 must be the first call of main/1.
start_trace() ->
    %% Crash and supervisor reports would go to standard_io, i.e. into the trace.
    logger:set_primary_config(level, none),
    colony_names = ets:new(colony_names, [named_table, public, set]),
    ets:insert(colony_names, {refcount, 0}),
    name(self(), main),
    ok.

%% name(Pid, Name) gives Pid a symbolic name; returns Pid.
name(Pid, Name) ->
    ets:insert(colony_names, [{Pid, Name}, {{pid, Name}, Pid}]),
    Pid.

%% pid(Name) is the latest pid named Name.
pid(Name) ->
    ets:lookup_element(colony_names, {pid, Name}, 2).

%% spawn_named/2 and spawn_link_named/2 start a named process. The child
%% names itself before running F, and the parent names it before returning,
%% so both sides can format the pid at once.
spawn_named(Name, F) ->
    name(spawn(fun() -> name(self(), Name), F() end), Name).

spawn_link_named(Name, F) ->
    name(spawn_link(fun() -> name(self(), Name), F() end), Name).

%% mon(Pid) monitors Pid and names the ref m<N>.
mon(Pid) ->
    Ref = erlang:monitor(process, Pid),
    N = ets:update_counter(colony_names, refcount, 1),
    ets:insert(colony_names, {Ref, list_to_atom("m" ++ integer_to_list(N))}),
    Ref.

%% ev(Words) prints one trace line: the words, canonically formatted, joined
%% by single spaces.
ev(Words) when is_list(Words) ->
    io:format("~s~n", [lists:join(" ", [fmt(W) || W <- Words])]).

fmt(T) -> io_lib:format("~w", [canon(T)]).

canon(P) when is_pid(P) ->
    case ets:lookup(colony_names, P) of
        [{_, N}] -> N;
        [] -> unnamed_pid
    end;
canon(R) when is_reference(R) ->
    case ets:lookup(colony_names, R) of
        [{_, N}] -> N;
        [] -> unnamed_ref
    end;
canon(T) when is_tuple(T) -> list_to_tuple([canon(E) || E <- tuple_to_list(T)]);
canon([H | T]) -> [canon(H) | canon(T)];
canon(M) when is_map(M) -> maps:from_list([{canon(K), canon(V)} || {K, V} <- maps:to_list(M)]);
canon(X) -> X.

%% await_down(Ref) waits for the DOWN of one monitor and prints
%% "down <ref> <pid> <reason>".
await_down(Ref) ->
    receive
        {'DOWN', Ref, process, Pid, Reason} -> ev([down, Ref, Pid, Reason])
    end.

%% await_exit(From) waits, in a trapping process, for the 'EXIT' message from
%% From and prints "exit <self> <from> <reason>".
await_exit(From) ->
    receive
        {'EXIT', From, Reason} -> ev([exit, self(), From, Reason])
    end.

%% await_dead(Pid) waits for Pid to die without printing anything.
await_dead(Pid) ->
    Ref = erlang:monitor(process, Pid),
    receive {'DOWN', Ref, process, _, _} -> ok end.

%% await_mailbox(N) polls until the caller's mailbox holds N messages. A
%% message that arrived while the caller waited in a receive without
%% clauses (the poll's own `receive after 1`) can stay in the outer signal
%% queue, which process_info/2 does not count on OTP 25, until a receive
%% with a clause looks (see settled_mailbox/0): so each poll first runs one
%% that matches nothing. Without it a 10 ms timer's message took ~200 ms to
%% show on an idle machine, and with both cores busy it never showed (the
%% escript hung in 11 of 12 runs of timers/start_timer_stale).
await_mailbox(N) ->
    receive '$colony_no_such_message' -> ok after 0 -> ok end,
    case process_info(self(), message_queue_len) of
        {message_queue_len, N} -> ok;
        _ -> receive after 1 -> await_mailbox(N) end
    end.

%% mailbox() prints every message left in the caller's mailbox, in order, as
%% "mailbox main <msg>", or "mailbox empty".  Only call it once every message that
%% could arrive is known to have arrived (or is known not to exist).
mailbox() ->
    {messages, Ms} = process_info(self(), messages),
    case Ms of
        [] -> ev([mailbox, empty]);
        _ -> [ev([mailbox, self(), M]) || M <- Ms]
    end,
    ok.

%% Scenario processes run loop/0.  It serves call/2 and cast/2 and forwards
%% every other message (an 'EXIT' message, a plain message) to main as
%% {fwd, Self, Msg}, so that only main prints and the trace has one order.
loop() ->
    receive
        {call, From, Ref, F} -> From ! {reply, Ref, try_(F)};
        {cast, F} -> F();
        M -> pid(main) ! {fwd, self(), M}
    end,
    loop().

%% spawn_loop(Name) starts a named loop/0 process.
spawn_loop(Name) -> spawn_named(Name, fun loop/0).

%% call(Pid, F) runs F inside Pid and returns its result (an error is caught
%% by try_/1).  Because it is a round trip, every signal main sent Pid
%% before the call has been handled when it returns.
call(Pid, F) ->
    Ref = make_ref(),
    Pid ! {call, self(), Ref, F},
    receive {reply, Ref, R} -> R end.

%% cast(Pid, F) runs F inside Pid without waiting.
cast(Pid, F) ->
    Pid ! {cast, F},
    ok.

%% await_fwd(From) waits for the next message From forwarded to main and
%% prints it like recv/0 does, with From as the receiver:
%% "exit <from> <sender> <reason>" for an 'EXIT' message, else
%% "recv <from> <msg>".
await_fwd(From) ->
    receive {fwd, From, M} -> print_msg(From, M) end.

%% recv() takes the next message of main's mailbox, whatever it is, and
%% prints it: "down ..." for a 'DOWN', "exit main ..." for an 'EXIT',
%% "recv main <msg>" for anything else.
recv() ->
    receive M -> print_msg(self(), M) end.

print_msg(_To, {'DOWN', Ref, process, Pid, Reason}) -> ev([down, Ref, Pid, Reason]);
print_msg(To, {'EXIT', From, Reason}) -> ev([exit, To, From, Reason]);
print_msg(To, M) -> ev([recv, To, M]).

%% alive(Pid) prints "alive <pid> true|false".
alive(Pid) ->
    ev([alive, Pid, is_process_alive(Pid)]).

%% try_(F) runs F and returns its value, or the atom of an error (badarg,
%% noproc) without the stack, or {exit, Reason} / {throw, T}.
try_(F) ->
    try F()
    catch
        error:E -> E;
        exit:R -> {exit, R};
        throw:T -> {throw, T}
    end.

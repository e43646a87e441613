%% colony_statem.hrl: the gen_statem of the gen_statem scenarios.  Include it
%% after colony_trace.hrl (not together with colony_gensrv.hrl or
%% colony_sup.hrl: the escript module is the callback module, and its init/1
%% serves both the machine, init({sm, ...}), and a supervisor, init({sup, ...})).
%%
%% Only main prints.  The machine reports what its callbacks see to main as
%% {sm, Name, Words}; main prints each report with await_sm/1 as one line,
%% the event word first, then the machine's name, then the rest:
%%   init <sm> <state>                 init/1 ran and returns State
%%   enter <sm> <old> <state>          a state enter call
%%   event <sm> <state> <type> <label> a state callback; Type is call, cast,
%%                                     info, timeout, state_timeout,
%%                                     {timeout,Name} or internal; Label is
%%                                     the content's label (below)
%%   terminate <sm> <reason> <state>   terminate/3 ran
%% Reports from one machine reach main in the order its callbacks ran.
%%
%% Event contents are commands: {Label, Directives}, or a bare Label, which
%% has none.  A state callback reports the event, then folds its directives
%% into its result (in order; the last transition wins):
%%   {next, S}          {next_state, S, ...}        keep      keep_state
%%   repeat             repeat_state                {stop, R} stop (with the
%%                      replies below, if any, {stop_and_reply, R, Replies})
%%   postpone           the postpone action
%%   {ne, T, C}         {next_event, T, C}
%%   {reply, V}         {reply, From, V} to this call
%%   hold               keep this call's From in the data
%%   {reply_held, V}    {reply, From, V} to every held From, oldest first
%%   {timeout, T, M}    {timeout, T, M}         {state_timeout, T, M} as is
%%   {gt, N, T, M}      {{timeout, N}, T, M}
%%   {update, K, M}     {K', update, M}         {cancel, K}  {K', cancel}
%%                      (K is timeout, state_timeout or {gt, N}: {timeout, N})
%%   crash              error({crashed, boom}) at once
%%   {in, S, Ds}        the directives Ds, only in state S
%% Timeout messages are contents too.
%%
%% Machine options (a map):
%%   init => S            the initial state (default a)
%%   init_actions => Ds   directives whose actions init/1 returns
%%   enter => Ds          state_enter mode; each enter call reports and
%%                        folds Ds (use {in, S, ...} to pick states)
%%   mode => state_functions   a function per state (a, b, c, d) instead of
%%                        handle_event/4
%%   trap => true         trap exits (set in init/1)
%%   block_terminate => true   terminate/3 waits for a release message
%%                        before it reports
%%
%% Results main prints (sm_call/3, or sm_call_async/3 and await_call/0):
%%   call <sm> <label> <result>   gen_statem:call returned Result, or exited:
%%                                {exit,R} for an exit {R, {gen_statem,...}}
%% Crash reasons print without their stack: a reason {R, Stack} prints as R,
%% {bad_state_enter_return_from_state_function, Result} as its first element.

start_sm(Name, Opts) ->
    {ok, Pid} = gen_statem:start(?MODULE, {sm, Name, Opts}, []),
    name(Pid, Name),
    await_sm(Name),
    Pid.

%% start_sm_link/2 is a supervisor's start function: it prints nothing.
start_sm_link(Name, Opts) ->
    gen_statem:start_link(?MODULE, {sm, Name, Opts}, []).

init({sm, Name, Opts}) ->
    name(self(), Name),
    put(sm_name, Name),
    put(sm_mode, maps:get(mode, Opts, handle_event_function)),
    put(sm_enter, maps:is_key(enter, Opts)),
    case maps:get(trap, Opts, false) of
        true -> process_flag(trap_exit, true);
        false -> ok
    end,
    State = maps:get(init, Opts, a),
    report([init, State]),
    Data = #{opts => Opts, held => []},
    {_Res, _Stop, Acts, Data1} = fold(maps:get(init_actions, Opts, []), State, undefined, Data),
    {ok, State, Data1, Acts};
init({sup, Flags, Children}) ->
    {ok, {Flags, Children}}.

callback_mode() ->
    case get(sm_enter) of
        true -> [get(sm_mode), state_enter];
        false -> get(sm_mode)
    end.

handle_event(enter, Old, State, Data) -> do_enter(Old, State, Data);
handle_event(Type, Content, State, Data) -> do_event(Type, Content, State, Data).

a(enter, Old, Data) -> do_enter(Old, a, Data);
a(Type, Content, Data) -> do_event(Type, Content, a, Data).
b(enter, Old, Data) -> do_enter(Old, b, Data);
b(Type, Content, Data) -> do_event(Type, Content, b, Data).
c(enter, Old, Data) -> do_enter(Old, c, Data);
c(Type, Content, Data) -> do_event(Type, Content, c, Data).
d(enter, Old, Data) -> do_enter(Old, d, Data);
d(Type, Content, Data) -> do_event(Type, Content, d, Data).

terminate(Reason, State, #{opts := Opts}) ->
    case maps:get(block_terminate, Opts, false) of
        true -> receive release -> ok end;
        false -> ok
    end,
    report([terminate, reason(Reason), State]).

do_enter(Old, State, #{opts := Opts} = Data) ->
    report([enter, Old, State]),
    result(fold(maps:get(enter, Opts), State, undefined, Data)).

do_event(Type, Content, State, Data) ->
    {Label, Dirs} = case Content of
                        {L, Ds} when is_list(Ds) -> {L, Ds};
                        _ -> {Content, []}
                    end,
    {TypeW, From} = case Type of
                        {call, F} -> {call, F};
                        _ -> {Type, undefined}
                    end,
    report([event, State, TypeW, Label]),
    result(fold(Dirs, State, From, Data)).

%% fold(Directives, State, From, Data) -> {Res, Stop, Actions, Data}.
fold(Dirs, State, From, Data) ->
    lists:foldl(fun(D, Acc) -> dir(D, State, From, Acc) end, {keep, undefined, [], Data}, Dirs).

dir({in, S, Ds}, State, From, Acc) ->
    case S =:= State of
        true -> lists:foldl(fun(D, A) -> dir(D, State, From, A) end, Acc, Ds);
        false -> Acc
    end;
dir({next, S}, _, _, {_, Stop, Acts, D}) -> {{next, S}, Stop, Acts, D};
dir(keep, _, _, {_, Stop, Acts, D}) -> {keep, Stop, Acts, D};
dir(repeat, _, _, {_, Stop, Acts, D}) -> {repeat, Stop, Acts, D};
dir({stop, R}, _, _, {Res, _, Acts, D}) -> {Res, R, Acts, D};
dir(postpone, _, _, Acc) -> act(postpone, Acc);
dir({ne, T, C}, _, _, Acc) -> act({next_event, T, C}, Acc);
dir({reply, V}, _, From, Acc) -> act({reply, From, V}, Acc);
dir(hold, _, From, {Res, Stop, Acts, #{held := H} = D}) -> {Res, Stop, Acts, D#{held := H ++ [From]}};
dir({reply_held, V}, _, _, {Res, Stop, Acts, #{held := H} = D}) ->
    {Res, Stop, Acts ++ [{reply, F, V} || F <- H], D#{held := []}};
dir({timeout, T, M}, _, _, Acc) -> act({timeout, T, M}, Acc);
dir({state_timeout, T, M}, _, _, Acc) -> act({state_timeout, T, M}, Acc);
dir({gt, N, T, M}, _, _, Acc) -> act({{timeout, N}, T, M}, Acc);
dir({update, K, M}, _, _, Acc) -> act({kind(K), update, M}, Acc);
dir({cancel, K}, _, _, Acc) -> act({kind(K), cancel}, Acc);
dir(crash, _, _, _) -> error({crashed, boom}).

act(A, {Res, Stop, Acts, D}) -> {Res, Stop, Acts ++ [A], D}.

kind({gt, N}) -> {timeout, N};
kind(K) -> K.

result({Res, undefined, Acts, D}) ->
    case Res of
        keep -> {keep_state, D, Acts};
        repeat -> {repeat_state, D, Acts};
        {next, S} -> {next_state, S, D, Acts}
    end;
result({_, Stop, Acts, D}) ->
    case [A || {reply, _, _} = A <- Acts] of
        [] -> {stop, Stop, D};
        Replies -> {stop_and_reply, Stop, Replies, D}
    end.

report(Words) -> pid(main) ! {sm, get(sm_name), Words}.

%% await_sm(Name) prints the next report of the machine Name.
await_sm(Name) ->
    receive {sm, Name, [W | Ws]} -> ev([W, Name | Ws]) end.

%% await_sm(Name, N) prints the next N reports of the machine Name.
await_sm(_, 0) -> ok;
await_sm(Name, N) -> await_sm(Name), await_sm(Name, N - 1).

reason({bad_state_enter_return_from_state_function, _}) -> bad_state_enter_return_from_state_function;
reason({R, [{_, _, _, _} | _]}) -> reason(R);
reason(R) -> R.

%% await_sm_down(Ref) is await_down/1 with the reason printed by reason/1.
await_sm_down(Ref) ->
    receive
        {'DOWN', Ref, process, Pid, Reason} -> ev([down, Ref, Pid, reason(Reason)])
    end.

label({L, Ds}) when is_list(Ds) -> L;
label(C) -> C.

sm_call(Sm, Content, Timeout) ->
    R = try gen_statem:call(Sm, Content, Timeout)
        catch exit:{Reason, {gen_statem, call, _}} -> {exit, reason(Reason)}
        end,
    ev([call, Sm, label(Content), R]).

%% sm_call_async(Sm, Content, Timeout) makes the call from a new process k,
%% which sends main the result; await_call/0 prints it as sm_call/3 does.
sm_call_async(Sm, Content, Timeout) ->
    Main = self(),
    spawn_named(k, fun() ->
                           R = try gen_statem:call(Sm, Content, Timeout)
                               catch exit:{Reason, {gen_statem, call, _}} -> {exit, reason(Reason)}
                               end,
                           Main ! {call_result, Sm, label(Content), R}
                   end).

await_call() ->
    receive {call_result, Sm, Label, R} -> ev([call, Sm, Label, R]) end.

sm_cast(Sm, Content) ->
    ok = gen_statem:cast(Sm, Content).

%% colony_sup.hrl: supervisor and worker callbacks for the supervisor
%% scenarios.  Include it after colony_trace.hrl.
%%
%% The escript module itself is the callback module of both behaviours:
%% supervisor calls init({sup, ...}), gen_server calls init({worker, ...}).
%% Child specs name their modules [worker] or [sup] so that the escript's
%% generated module name never reaches the trace.
%%
%% Worker events (printed by the worker itself):
%%   start <id>            init/1 succeeded
%%   stop <id> <reason>    terminate/2 ran (workers trap exits, so a
%%                         shutdown from the supervisor runs terminate/2;
%%                         brutal_kill and a kill after the shutdown
%%                         timeout do not)
%%   stalling <id>         terminate/2 began to stall (opts stall)
%%   released <id>         a stalled terminate/2 was released by main
%% Besides printing, init/1 sends {started, Id, Pid} to main and a stalling
%% terminate/2 sends {stalling, Id}, so main can wait for them.
%%
%% Worker options (a map):
%%   init => {stop, R} | ignore   make init/1 fail or ignore
%%   init => switch               do what main last set with switch/2
%%                                (ok, ignore or {stop, R}; ok if unset),
%%                                so a restart can fail after a good start
%%   quiet => true                print and notify nothing
%%   quiet_shutdown => true       print nothing when stopped with shutdown
%%   stall => forever | release   terminate/2 blocks forever, or until main
%%                                sends release
%%   links => true                terminate/2 prints "links <id> <n>", the
%%                                number of links the worker still holds

init({sup, Name, Flags, Specs}) ->
    name(self(), Name),
    {ok, {Flags, Specs}};
init({dynsup, Name, Flags}) ->
    %% A supervisor whose init/1 computes its children: its n-th init
    %% starts workers <Name>1 .. <Name>n (dynsub/2).
    name(self(), Name),
    N = persistent_term:get({colony_inits, Name}, 0) + 1,
    persistent_term:put({colony_inits, Name}, N),
    ev([init, Name, N]),
    Ids = [list_to_atom(atom_to_list(Name) ++ integer_to_list(I)) || I <- lists:seq(1, N)],
    {ok, {Flags, [worker(Id) || Id <- Ids]}};
init({worker, Id, Opts}) ->
    process_flag(trap_exit, true),
    name(self(), Id),
    Init = case maps:get(init, Opts, ok) of
        switch -> persistent_term:get({colony_switch, Id}, ok);
        I -> I
    end,
    case Init of
        ok ->
            case maps:get(quiet, Opts, false) of
                true -> ok;
                false ->
                    ev([start, Id]),
                    pid(main) ! {started, Id, self()}
            end,
            {ok, #{id => Id, opts => Opts}};
        ignore -> ignore;
        {stop, R} -> {stop, R}
    end.

handle_call(ping, _From, S) -> {reply, pong, S}.

handle_cast({stop, R}, S) -> {stop, R, S}.

%% An exit signal from a process other than the parent (main's exit/2):
%% stop with its reason, as a non-trapping process would.
handle_info({'EXIT', _From, R}, S) -> {stop, R, S};
handle_info(_, S) -> {noreply, S}.

terminate(R, #{id := Id, opts := Opts}) ->
    Quiet = maps:get(quiet, Opts, false) orelse
        (R =:= shutdown andalso maps:get(quiet_shutdown, Opts, false)),
    case Quiet of
        true -> ok;
        false -> ev([stop, Id, R])
    end,
    case maps:get(links, Opts, false) of
        true ->
            {links, Ls} = process_info(self(), links),
            ev([links, Id, length(Ls)]);
        false -> ok
    end,
    case maps:get(stall, Opts, no) of
        no -> ok;
        forever ->
            ev([stalling, Id]),
            pid(main) ! {stalling, Id},
            receive never -> ok end;
        release ->
            ev([stalling, Id]),
            pid(main) ! {stalling, Id},
            receive release -> ev([released, Id]) end
    end.

code_change(_, S, _) -> {ok, S}.

%% switch(Id, Init) sets what the next init/1 of a worker with
%% init => switch does.
switch(Id, Init) ->
    persistent_term:put({colony_switch, Id}, Init).

%% Child specs.
worker(Id) -> worker(Id, permanent, #{}).
worker(Id, Restart) -> worker(Id, Restart, #{}).
worker(Id, Restart, Opts) ->
    #{id => Id,
      start => {gen_server, start_link, [?MODULE, {worker, Id, Opts}, []]},
      restart => Restart,
      type => worker,
      modules => [worker]}.

subsup(Id, Flags, Specs) ->
    #{id => Id,
      start => {supervisor, start_link, [?MODULE, {sup, Id, Flags, Specs}]},
      restart => permanent,
      shutdown => infinity,
      type => supervisor,
      modules => [sup]}.

%% dynsub(Id, Flags) is a child supervisor whose init/1 computes its
%% children afresh at every start (init({dynsup, ...})).
dynsub(Id, Flags) ->
    #{id => Id,
      start => {supervisor, start_link, [?MODULE, {dynsup, Id, Flags}]},
      restart => permanent,
      shutdown => infinity,
      type => supervisor,
      modules => [sup]}.

%% start_sup(Name, Flags, Specs) starts a supervisor linked to main (main
%% traps exits in every supervisor scenario) and prints
%% "start_link <name> ok" or "start_link <name> {error,...}".
start_sup(Name, Flags, Specs) ->
    case supervisor:start_link(?MODULE, {sup, Name, Flags, Specs}) of
        {ok, Pid} -> ev([start_link, Name, ok]), Pid;
        Err -> ev([start_link, Name, Err]), Err
    end.

%% stop_sup(Sup) sends it shutdown from its parent (main) and waits for it to
%% die, printing the 'DOWN' and the 'EXIT' main gets.
stop_sup(Sup) ->
    M = mon(Sup),
    true = exit(Sup, shutdown),
    await_down(M),
    await_exit(Sup).

%% crash(Id, R) makes worker Id stop with reason R (through terminate/2).
crash(Id, R) ->
    gen_server:cast(pid(Id), {stop, R}).

%% await_start(Id) waits for worker Id's init/1.
await_start(Id) ->
    receive {started, Id, _} -> ok end.

await_stalling(Id) ->
    receive {stalling, Id} -> ok end.

%% children(Sup) prints "which_children <sup> [...]", sorted by id (and name
%% of the child, for simple_one_for_one whose ids are all undefined).
children(Sup) ->
    Cs = supervisor:which_children(Sup),
    ev([which_children, Sup, lists:sort(canon(Cs))]).

counts(Sup) ->
    ev([count_children, Sup, supervisor:count_children(Sup)]).

%% await_child(Sup, Id, State) polls which_children until child Id is in
%% State: undefined (not running), absent (not in the list), running or
%% restarting (a restart failed and is being retried).
%% A child's exit signal and main's call reach the supervisor from
%% different senders, in no set order, so only polling is deterministic.
await_child(Sup, Id, State) ->
    Cs = supervisor:which_children(Sup),
    Now = case lists:keyfind(Id, 1, Cs) of
        false -> absent;
        {_, undefined, _, _} -> undefined;
        {_, P, _, _} when is_pid(P) -> running;
        {_, Other, _, _} -> Other
    end,
    case Now of
        State -> ok;
        _ -> receive after 1 -> await_child(Sup, Id, State) end
    end.

%% colony_pg.hrl: helpers of the process-group and registry scenarios (pg/),
%% included after colony_trace.hrl.
%%
%% pg's membership is eventually consistent even on one node: pg's server
%% monitors every member and drops a dead one when its DOWN reaches the
%% server, which can be after the scenario has seen its own DOWN (the two
%% come from one dying process, but nothing orders the server's handling
%% against main's next look). members/1 therefore waits, up to a deadline,
%% until no member it lists is dead, and then prints what it sees; a member
%% that stays dead past the deadline is printed, not hidden. pg documents
%% no order for get_members/1, so members are printed sorted by name.

%% start_pg/0 starts pg's default scope, linked to main (as kernel would
%% start it when configured to), and notes the names registered so far, so
%% that registered_names/0 prints only those the scenario registered.
start_pg() ->
    {ok, _} = pg:start_link(),
    ets:insert(colony_names, {base_registered, registered()}),
    ok.

%% join(By, G, P): By (main itself, or a loop/0 process through call/2)
%% calls pg:join(G, P); prints "join <by> <g> <p> <result>".
join(By, G, P) -> ev([join, By, G, P, as(By, fun() -> pg:join(G, P) end)]).

%% leave(By, G, P) is join/3 for pg:leave(G, P): ok or not_joined.
leave(By, G, P) -> ev([leave, By, G, P, as(By, fun() -> pg:leave(G, P) end)]).

as(By, F) when By =:= self() -> try_(F);
as(By, F) -> call(By, F).

%% members(G) prints "members <g> [<p>,...]": pg:get_members(G), sorted by
%% name, once none of them is dead (or after about a second of polling).
members(G) -> members(G, 1000).

members(G, Tries) ->
    Ms = pg:get_members(G),
    case Tries =:= 0 orelse lists:all(fun erlang:is_process_alive/1, Ms) of
        true -> ev([members, G, lists:sort([canon(P) || P <- Ms])]);
        false -> receive after 1 -> members(G, Tries - 1) end
    end.

%% reg/2, unreg/1 and where/1 print register/2, unregister/1 and whereis/1
%% as the link scenarios do: "register <name> <p> true|badarg",
%% "unregister <name> true|badarg", "whereis <name> <p>|undefined".
reg(Name, P) -> ev([register, Name, P, try_(fun() -> register(Name, P) end)]).
unreg(Name) -> ev([unregister, Name, try_(fun() -> unregister(Name) end)]).
where(Name) -> ev([whereis, Name, whereis(Name)]).

%% registered_names() prints "registered [<name>,...]": registered() less
%% the names registered before the scenario began, sorted (registered/0
%% documents no order).
registered_names() ->
    [{_, Base}] = ets:lookup(colony_names, base_registered),
    ev([registered, lists:sort(registered() -- Base)]).

%% registered_name(P) prints "registered_name <p> <name>|[]|undefined":
%% process_info(P, registered_name), [] for a live process with no name,
%% undefined for a dead one.
registered_name(P) ->
    R = case process_info(P, registered_name) of
            {registered_name, N} -> N;
            Other -> Other
        end,
    ev([registered_name, P, R]).

%% gmon(G) starts a group monitor (pg:monitor/1), names its ref m<N> as
%% mon/1 names a monitor's, and prints "monitor <g> <ref> [<p>,...]": the
%% members pg:monitor/1 returned, sorted by name.
gmon(G) ->
    {Ref, Ms} = pg:monitor(G),
    N = ets:update_counter(colony_names, refcount, 1),
    ets:insert(colony_names, {Ref, list_to_atom("m" ++ integer_to_list(N))}),
    ev([monitor, G, Ref, lists:sort([canon(P) || P <- Ms])]),
    Ref.

%% await_group(Ref) waits for the next notification of group monitor Ref
%% and prints "group <ref> join|leave <g> [<p>,...]". Notifications of
%% different monitors have no order the scenarios rely on; each is taken by
%% its ref.
await_group(Ref) ->
    receive
        {Ref, Verb, G, Pids} when Verb =:= join; Verb =:= leave -> ev([group, Ref, Verb, G, Pids])
    end.

%% gdemon(Ref) prints "demonitor <ref> ok|false": pg:demonitor(Ref), which
%% also flushes Ref's notifications from the caller's mailbox when it is ok.
gdemon(Ref) -> ev([demonitor, Ref, pg:demonitor(Ref)]).

%% which_groups() prints "which_groups [<g>,...]": pg:which_groups(),
%% sorted (it documents no order).
which_groups() -> ev([which_groups, lists:sort(pg:which_groups())]).

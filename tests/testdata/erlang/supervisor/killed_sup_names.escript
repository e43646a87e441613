#!/usr/bin/env escript
%% killed_sup_names: when a supervisor is killed, its parent's 'EXIT' comes before its children are gone: each child dies of its own exit signal (killed), and may still hold its registered name when the parent looks (on OTP 25, with 3 named children, some name was still held in 200 of 200 tries, so this trace does not look then). Once the parent has each child's DOWN, every name is free and the same tree, the same names included, starts again.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

%% named(Id) is a quiet worker registered as Id ({local, Id}).
named(Id) ->
    #{id => Id,
      start => {gen_server, start_link, [{local, Id}, ?MODULE, {worker, Id, #{quiet => true}}, []]},
      restart => permanent,
      type => worker,
      modules => [worker]}.

where_all(Ids) -> [ev([whereis, Id, whereis(Id)]) || Id <- Ids].

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Ids = [w1, w2, w3],
    Flags = #{strategy => one_for_one, intensity => 3, period => 3600},
    Sup = start_sup(sup, Flags, [named(Id) || Id <- Ids]),
    where_all(Ids),
    Ms = [mon(pid(Id)) || Id <- Ids],
    true = exit(Sup, kill),
    await_exit(Sup),
    [await_down(M) || M <- Ms],
    where_all(Ids),
    Sup2 = start_sup(sup, Flags, [named(Id) || Id <- Ids]),
    where_all(Ids),
    stop_sup(Sup2),
    where_all(Ids),
    mailbox().

#!/usr/bin/env escript
%% start_fail_name: a named start whose init stops or ignores (gen_server:start({local, Name}, ...); Colony's StartServer with the Name spawn option) has released the name when the start returns: whereis says undefined at once, and the next start with that name succeeds.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

%% The servers are gen_servers that init/1 starts as told: {stop, boom},
%% ignore, or running. start/3 prints "start <id> <name> <result>", the
%% result being ok, ignore or {error,Reason}.
init({_, stop}) -> {stop, boom};
init({_, ignore}) -> ignore;
init({Id, run}) -> name(self(), Id), {ok, Id}.
handle_call(_, _, S) -> {reply, ok, S}.
handle_cast(_, S) -> {noreply, S}.
handle_info(_, S) -> {noreply, S}.

start(Id, Name, Init) ->
    R = case gen_server:start({local, Name}, ?MODULE, {Id, Init}, []) of
            {ok, P} -> name(P, Id), ok;
            Other -> Other
        end,
    ev([start, Id, Name, R]).

main(_) ->
    start_trace(),
    start_pg(),
    start(a, worker, stop),
    where(worker),
    start(b, worker, run),
    where(worker),
    start(c, other, ignore),
    where(other),
    start(d, other, run),
    where(other),
    registered_names(),
    mailbox().

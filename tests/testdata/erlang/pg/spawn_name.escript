#!/usr/bin/env escript
%% spawn_name: a process started with a name (gen_server:start({local, Name}, ...); Colony's Name spawn option) holds it as soon as the start returns; a start with a taken name fails with already_started and leaves the holder in place; once the holder is dead, the next start can take the name at once.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_pg.hrl").

%% The started processes are gen_servers whose handle_info/2 forwards every
%% message to main as loop/0 does; start/2 prints "start <id> <name> ok" or
%% "start <id> <name> {error,already_started}" (the holder's pid, the rest
%% of OTP's {error, {already_started, Pid}}, is shown by a whereis line).
init(Id) -> name(self(), Id), {ok, Id}.
handle_call(_, _, S) -> {reply, ok, S}.
handle_cast(_, S) -> {noreply, S}.
handle_info(M, S) -> pid(main) ! {fwd, self(), M}, {noreply, S}.

start(Id, Name) ->
    R = case gen_server:start({local, Name}, ?MODULE, Id, []) of
            {ok, P} -> name(P, Id), ok;
            {error, {already_started, _}} -> {error, already_started}
        end,
    ev([start, Id, Name, R]).

main(_) ->
    start_trace(),
    start_pg(),
    start(a, worker),
    where(worker),
    worker ! hello,
    await_fwd(pid(a)),
    start(b, worker),
    where(worker),
    start(b, other),
    Ma = mon(pid(a)),
    exit(pid(a), boom),
    await_down(Ma),
    start(c, worker),
    where(worker),
    worker ! again,
    await_fwd(pid(c)),
    registered_names(),
    mailbox().

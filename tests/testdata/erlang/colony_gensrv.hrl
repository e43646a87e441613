%% colony_gensrv.hrl: the gen_server of the gen_server scenarios.  Include it
%% after colony_trace.hrl (not together with colony_sup.hrl: both define the
%% gen_server callbacks of the escript module).
%%
%% Only main prints.  The server reports what its callbacks see to main as
%% {gs, Self, Words}; main prints each report with await_gs/1 as one line,
%% the event word first, then the server's name, then the rest:
%%   cast <srv> <msg>        handle_cast got {note, Msg}
%%   info <srv> <msg>        handle_info got Msg (a plain message, an 'EXIT'
%%                           from a process other than the parent, poke)
%%   timeout <srv>           handle_info got the gen_server timeout
%%   continue <srv> <c>      handle_continue ran with [C | _]
%%   terminate <srv> <r>     terminate/2 ran with reason R
%% Reports from one server reach main in the order its callbacks ran.
%%
%% Results main prints:
%%   gen_call <srv> <req> <result>   gen_server:call returned Result, or
%%                                   exited: {exit,R} where the exit reason
%%                                   was {R, {gen_server, call, _}}
%%   start <srv> <result>            gen_server:start_link returned
%%                                   ok (for {ok, Pid}), ignore or {error,R}
%%   gen_cast <dest> <msg> <result>  gen_server:cast(Dest, Msg) returned
%%                                   Result (always ok)
%% A call or cast by registered name prints the name (srv, nobody) where a
%% call by pid prints the server's name (s1, s2).
%%
%% Server options (a map, start_srv/2 and start_link_srv/2):
%%   trap => true                     trap exits (set in init/1)
%%   init => ignore | {stop, R} | block
%%                                    init/1 ignores, stops with R, or
%%                                    blocks forever (for a start timeout)
%%   reg => Name                      start with {local, Name}: the server
%%                                    is registered as Name
%%   gate => P                        init/1 sends P {holding, Self} and
%%                                    waits for go (P queues messages first)
%%   cont => Cs                       init/1 returns {ok, S, {continue, Cs}}
%%
%% Calls (handle_call):
%%   ping                  {reply, pong, S}
%%   {echo, X}             {reply, X, S}
%%   {stop, R, Reply}      {stop, R, Reply, S}: reply, then terminate
%%   {stop, R}             {stop, R, S}: terminate without a reply
%%   hold                  {noreply, S}, keeping From for {release, V}
%%   {hand_to, P}          P ! {reply_for, From}: P answers the call
%%   later                 keeps From and sends itself {release, later}:
%%                         handle_info answers the call
%%   {hold_notify, P}      as hold, and P ! {holding, Self}
%%   {arm, T}              {reply, ok, S, T}
%%   whoami                {reply, self(), S}: which server answered
%%   {cont, P, Cs}         P ! {holding, Self}, wait for go, then
%%                         {reply, ok, S, {continue, Cs}}
%% Continues (handle_continue, Cs a list):
%%   [{stop, R} | _]       report continue {stop, R}; {stop, R, S}
%%   [C | Rest]            report continue C; {noreply, S, {continue, Rest}}
%%                         unless Rest is [], then {noreply, S}
%% Casts (handle_cast):
%%   {note, X}             report cast X
%%   {stop, R}             {stop, R, S}
%%   {release, V}          gen_server:reply(Held, V)
%%   {cont, Cs}            {noreply, S, {continue, Cs}} (as an info too)
%%   {pokes, N, T, Rearm}  send itself N pokes, return {noreply, S, T}; each
%%                         poke is reported and returns {noreply, S, T} if
%%                         Rearm, else {noreply, S}

%% start_srv(Name, Opts) starts a server with no link (gen_server:start)
%% and returns its pid.
start_srv(Name, Opts) ->
    {ok, Pid} = start(start, Name, Opts, []),
    Pid.

%% start_link_srv(Name, Opts[, StartOpts]) starts a server linked to the
%% caller (StartOpts: gen_server:start_link's options, [{timeout, T}]),
%% prints "start <name> <result>" and returns the pid, or the result if the
%% start failed.
start_link_srv(Name, Opts) ->
    start_link_srv(Name, Opts, []).

start_link_srv(Name, Opts, StartOpts) ->
    R = start(start_link, Name, Opts, StartOpts),
    case R of
        {ok, Pid} -> ev([start, Name, ok]), Pid;
        Other -> ev([start, Name, Other]), Other
    end.

%% start(F, Name, Opts, StartOpts) is gen_server:F, with {local, Reg} when
%% Opts has reg => Reg.
start(F, Name, Opts, StartOpts) ->
    case Opts of
        #{reg := Reg} -> gen_server:F({local, Reg}, ?MODULE, {srv, Name, Opts}, StartOpts);
        _ -> gen_server:F(?MODULE, {srv, Name, Opts}, StartOpts)
    end.

init({srv, Name, Opts}) ->
    name(self(), Name),
    case maps:get(trap, Opts, false) of
        true -> process_flag(trap_exit, true);
        false -> ok
    end,
    case maps:get(gate, Opts, none) of
        none -> ok;
        P -> gate(P)
    end,
    S = #{held => none, rearm => false},
    case maps:get(init, Opts, ok) of
        ok ->
            case Opts of
                #{cont := Cs} -> {ok, S, {continue, Cs}};
                _ -> {ok, S}
            end;
        ignore -> ignore;
        {stop, R} -> {stop, R};
        block -> receive never -> ok end
    end.

%% gate(P) lets P queue messages to the server, which waits for P's go.
gate(P) ->
    P ! {holding, self()},
    receive go -> ok end.

report(Words) ->
    pid(main) ! {gs, self(), Words},
    ok.

handle_call(ping, _From, S) -> {reply, pong, S};
handle_call({echo, X}, _From, S) -> {reply, X, S};
handle_call({stop, R, Reply}, _From, S) -> {stop, R, Reply, S};
handle_call({stop, R}, _From, S) -> {stop, R, S};
handle_call(hold, From, S) -> {noreply, S#{held := From}};
handle_call({hand_to, P}, From, S) ->
    P ! {reply_for, From},
    {noreply, S};
handle_call(later, From, S) ->
    self() ! {release, later},
    {noreply, S#{held := From}};
handle_call({hold_notify, P}, From, S) ->
    P ! {holding, self()},
    {noreply, S#{held := From}};
handle_call({arm, T}, _From, S) -> {reply, ok, S, T};
handle_call(whoami, _From, S) -> {reply, self(), S};
handle_call({cont, P, Cs}, _From, S) ->
    gate(P),
    {reply, ok, S, {continue, Cs}}.

handle_cast({note, X}, S) ->
    report([cast, X]),
    {noreply, S};
handle_cast({stop, R}, S) -> {stop, R, S};
handle_cast({release, V}, S) -> {noreply, release(V, S)};
handle_cast({cont, Cs}, S) -> {noreply, S, {continue, Cs}};
handle_cast({pokes, N, T, Rearm}, S) ->
    [self() ! poke || _ <- lists:seq(1, N)],
    {noreply, S#{rearm := Rearm andalso T}, T}.

handle_info({release, V}, S) -> {noreply, release(V, S)};
handle_info({cont, Cs}, S) -> {noreply, S, {continue, Cs}};
handle_info(timeout, S) ->
    report([timeout]),
    {noreply, S};
handle_info(poke, #{rearm := T} = S) ->
    report([info, poke]),
    case T of
        false -> {noreply, S};
        _ -> {noreply, S, T}
    end;
handle_info(M, S) ->
    report([info, M]),
    {noreply, S}.

handle_continue([{stop, R} | _], S) ->
    report([continue, {stop, R}]),
    {stop, R, S};
handle_continue([C | Rest], S) ->
    report([continue, C]),
    case Rest of
        [] -> {noreply, S};
        _ -> {noreply, S, {continue, Rest}}
    end.

release(V, #{held := From} = S) ->
    ok = gen_server:reply(From, V),
    S#{held := none}.

terminate(R, _S) ->
    report([terminate, R]).

code_change(_, S, _) -> {ok, S}.

%% await_gs(Srv) waits for Srv's next report and prints it.
await_gs(Srv) ->
    receive
        {gs, Srv, [Ev | Rest]} -> ev([Ev, Srv | Rest])
    end.

%% gen_call(Srv, Req[, Timeout]) calls Srv and prints "gen_call <srv> <req>
%% <result>"; an exit {R, {gen_server, call, _}} prints as {exit,R}.
gen_call(Srv, Req) -> gen_call(Srv, Req, 5000).

gen_call(Srv, Req, Timeout) ->
    R = try gen_server:call(Srv, Req, Timeout)
        catch exit:{Reason, {gen_server, call, _}} -> {exit, Reason}
        end,
    ev([gen_call, Srv, Req, R]),
    R.

%% gen_cast(Dest, Msg) casts Msg to Dest (a pid or a registered name) and
%% prints "gen_cast <dest> <msg> <result>".
gen_cast(Dest, Msg) ->
    ev([gen_cast, Dest, Msg, gen_server:cast(Dest, Msg)]).

%% Differential scenarios for links, exits and monitors across nodes
%% (dist/erlang_signal_test.go). A scenario runs on a driver node against a
%% peer node; the peer runs a controller registered as ctl, either this
%% module's (an Erlang peer) or the Go one of the test (a Colony peer), and
%% the scenario's trace, with pids replaced by role names, must be the same
%% for both.
%%
%% The controller protocol: {ctl, {From, Tag}, {spawn, Trap, Name}} makes a
%% peer process (registered as Name unless undefined) and answers
%% {Tag, Pid}. A peer process takes {do, From, Tag, Op} and answers {Tag,
%% Result}; Op is {link, T}, {unlink, T}, {monitor, T} (T a pid or {Name,
%% Node}), {monitor_node, Node}, {exit, T, Reason}, {stop, Reason},
%% {linked, Pid} (a boolean), or inbox (the messages it got, oldest first:
%% {'EXIT', From, Reason}, {'DOWN', Object, Reason} without the ref,
%% {nodedown, Node}).
-module(sigdiff).
-export([start_ctl/0, run/2, kill_setup/2, kill_trace/1]).

%% The controller (an Erlang peer).

start_ctl() ->
    Pid = spawn(fun ctl/0),
    register(ctl, Pid),
    ok.

ctl() ->
    receive
        {ctl, {From, Tag}, {spawn, Trap, Name}} ->
            P = spawn(fun() -> process_flag(trap_exit, Trap), proc([]) end),
            Name =:= undefined orelse register(Name, P),
            From ! {Tag, P}
    end,
    ctl().

proc(Inbox) ->
    receive
        {do, From, Tag, {stop, Reason}} ->
            From ! {Tag, ok},
            exit(Reason);
        {do, From, Tag, Op} ->
            From ! {Tag, op(Op, Inbox)},
            proc(Inbox);
        {'DOWN', _, process, Obj, Reason} ->
            proc(Inbox ++ [{'DOWN', Obj, Reason}]);
        M ->
            proc(Inbox ++ [M])
    end.

op({link, T}, _) -> link(T), ok;
op({unlink, T}, _) -> unlink(T), ok;
op({monitor, T}, _) -> monitor(process, T), ok;
op({monitor_node, N}, _) -> monitor_node(N, true), ok;
op({exit, T, R}, _) -> exit(T, R), ok;
op({linked, P}, _) -> {links, L} = process_info(self(), links), lists:member(P, L);
op(inbox, Inbox) -> Inbox.

%% The driver's side.

call(Peer, Req) ->
    Tag = make_ref(),
    {ctl, Peer} ! {ctl, {self(), Tag}, Req},
    receive {Tag, R} -> R after 10000 -> exit({no_answer, Req}) end.

do(P, Op) ->
    Tag = make_ref(),
    P ! {do, self(), Tag, Op},
    receive {Tag, R} -> R after 10000 -> exit({no_answer, Op}) end.

spawn_peer(Peer, Trap) -> spawn_peer(Peer, Trap, undefined).
spawn_peer(Peer, Trap, Name) -> call(Peer, {spawn, Trap, Name}).

%% A local process that links (or not) to Target, traps exits or not, and
%% reports every message to the driver as {Tag, Msg}; ping makes it answer
%% {Tag, pong}.
local(Tag, Trap, LinkTo) ->
    Self = self(),
    P = spawn(fun() ->
        process_flag(trap_exit, Trap),
        LinkTo =:= none orelse link(LinkTo),
        Self ! {Tag, ready},
        loop_local(Self, Tag)
    end),
    put(sigdiff_locals, [P | locals()]),
    receive {Tag, ready} -> P end.

loop_local(Self, Tag) ->
    receive
        ping -> Self ! {Tag, pong};
        {run, F, From} -> F(), From ! {ran, self()};
        {'DOWN', _, process, Obj, R} -> Self ! {Tag, {'DOWN', Obj, R}};
        M -> Self ! {Tag, M}
    end,
    loop_local(Self, Tag).

got(Tag) -> receive {Tag, M} -> M after 10000 -> {Tag, timeout} end.

%% dead(Pid) waits for the local Pid's death and gives its reason (noproc
%% if it is dead already).
dead(Pid) ->
    M = monitor(process, Pid),
    receive {'DOWN', M, _, _, R} -> R after 10000 -> still_alive end.

%% alive(Pid) checks that the local process Pid answers a ping.
alive(Tag, Pid) ->
    Pid ! ping,
    got(Tag).

%% A round trip to the peer's controller: what was sent to the peer before
%% has been handled there by the time it returns (one connection, in order).
sync(Peer) -> call(Peer, {spawn, false, undefined}).

%% run runs a scenario from a clean mailbox and kills the local processes
%% it made, so that no scenario sees another's messages.
run(Scenario, Peer) ->
    flush(),
    T = scenario(Scenario, Peer),
    [exit(P, kill) || P <- locals()],
    erase(sigdiff_locals),
    T.

flush() -> receive _ -> flush() after 0 -> ok end.

locals() -> case get(sigdiff_locals) of undefined -> []; L -> L end.

scenario({link_exit, Reason}, Peer) ->
    P = spawn_peer(Peer, false),
    L = local(l, true, P),
    N = local(n, false, P),
    MN = monitor(process, N),
    sync(Peer),
    case Reason of
        kill -> exit(P, kill);
        _ -> do(P, {stop, Reason})
    end,
    LGot = got(l),
    NGot = case Reason of
        normal -> alive(n, N);
        _ -> {dead, receive {'DOWN', MN, _, _, R} -> R after 10000 -> still_alive end}
    end,
    norm([{l, LGot}, {n, NGot}], [{P, p}, {L, l}, {N, n}]);

scenario(trapping_peer, Peer) ->
    P = spawn_peer(Peer, true),
    L = local(l, false, P),
    sync(Peer),
    exit(L, boom),
    dead(L),
    exit(P, normal),
    exit(P, {shutdown, x}),
    In = do(P, inbox),
    exit(P, kill),
    M = monitor(process, P),
    Down = receive {'DOWN', M, _, _, R} -> R after 10000 -> timeout end,
    norm([{inbox, In}, {killed, Down}], [{P, p}, {L, l}, {self(), driver}]);

scenario(peer_links_local, Peer) ->
    P = spawn_peer(Peer, true),
    L = local(l, true, none),
    ok = do(P, {link, L}),
    exit(L, kill),
    dead(L),
    D = local(d, false, none),
    exit(D, kill),
    dead(D),
    ok = do(P, {link, D}),
    sync(Peer),
    In = do(P, inbox),
    K = local(k, true, P),
    do(P, {stop, bang}),
    KGot = got(k),
    norm([{inbox, In}, {k, KGot}], [{P, p}, {L, l}, {D, d}, {K, k}]);

scenario(link_dead, Peer) ->
    D = spawn_peer(Peer, false),
    MD = monitor(process, D),
    do(D, {stop, normal}),
    receive {'DOWN', MD, _, _, _} -> ok after 10000 -> exit(still_alive) end,
    L = local(l, true, D),
    LGot = got(l),
    N = local(n, false, D),
    NGot = dead(N),
    norm([{l, LGot}, {n, NGot}], [{D, d}, {L, l}, {N, n}]);

scenario(monitors, Peer) ->
    P = spawn_peer(Peer, false, sigdiff_target),
    M1 = monitor(process, P),
    M2 = monitor(process, {sigdiff_target, Peer}),
    M3 = monitor(process, {sigdiff_nobody, Peer}),
    Unknown = receive {'DOWN', M3, process, O3, R3} -> {O3, R3} after 10000 -> timeout end,
    M4 = monitor(process, P),
    demonitor(M4),
    %% The peer monitors local processes, by pid and by name.
    W = spawn_peer(Peer, false),
    L = local(l, false, none),
    register(sigdiff_local, L),
    ok = do(W, {monitor, L}),
    ok = do(W, {monitor, {sigdiff_local, node()}}),
    ok = do(W, {monitor, {sigdiff_none, node()}}),
    do(P, {stop, bang}),
    Downs = [receive {'DOWN', M, process, O, R} -> {O, R} after 10000 -> timeout end || M <- [M1, M2]],
    exit(L, shutdown),
    dead(L),
    sync(Peer),
    In = do(W, inbox),
    Rest = receive {'DOWN', M4, _, _, _} = X -> X after 0 -> none end,
    norm([{unknown, Unknown}, {downs, Downs}, {demonitored, Rest}, {peer_inbox, lists:sort(In)}],
         [{P, p}, {L, l}, {W, w}, {Peer, peer}, {node(), driver}]);

scenario(peer_exits_local, Peer) ->
    P = spawn_peer(Peer, false),
    L = local(l, true, none),
    N = local(n, false, none),
    K = local(k, true, none),
    MK = monitor(process, K),
    ok = do(P, {exit, L, boom}),
    ok = do(P, {exit, L, normal}),
    ok = do(P, {exit, N, normal}),
    ok = do(P, {exit, K, kill}),
    L1 = got(l),
    L2 = got(l),
    KGot = receive {'DOWN', MK, _, _, R} -> R after 10000 -> timeout end,
    NGot = alive(n, N),
    norm([{l, [L1, L2]}, {n, NGot}, {k, KGot}], [{P, p}, {L, l}, {N, n}, {K, k}]);

scenario(unlink, Peer) ->
    %% The peer unlinks, then dies: the local process hears nothing.
    P = spawn_peer(Peer, false),
    L = local(l, true, P),
    sync(Peer),
    ok = do(P, {unlink, L}),
    do(P, {stop, boom}),
    %% The local process unlinks, then the peer's process dies.
    Q = spawn_peer(Peer, false),
    local_do(L, {link, Q}),
    local_do(L, {unlink, Q}),
    MQ = monitor(process, Q),
    do(Q, {stop, boom}),
    receive {'DOWN', MQ, _, _, _} -> ok after 10000 -> exit(still_alive) end,
    sync(Peer),
    Ping = alive(l, L),
    {links, Links} = process_info(L, links),
    norm([{l, Ping}, {l_links, Links}], [{P, p}, {L, l}, {Q, q}]);

scenario({unlink_race, Rounds}, Peer) ->
    P = spawn_peer(Peer, true),
    L = local(l, true, none),
    Res = race(Rounds, P, L, Peer),
    norm([{agree, Res}], []);

scenario(disconnect, Peer) ->
    P = spawn_peer(Peer, true),
    L = local(l, true, P),
    N = local(n, true, none),
    MP = monitor(process, P),
    monitor_node(Peer, true),
    monitor_node(Peer, true),
    ok = do(P, {link, N}),
    ok = do(P, {monitor, N}),
    ok = do(P, {monitor_node, node()}),
    sync(Peer),
    true = erlang:disconnect_node(Peer),
    LGot = got(l),
    NGot = got(n),
    Down = receive {'DOWN', MP, _, _, R} -> R after 10000 -> timeout end,
    ND = [receive {nodedown, Peer} -> nodedown after 10000 -> timeout end || _ <- [1, 2]],
    %% Reconnect (a new connection) and read what the peer process saw.
    In = do(P, inbox),
    norm([{l, LGot}, {n, NGot}, {down, Down}, {nodedown, ND}, {peer_inbox, lists:sort(In)}],
         [{P, p}, {L, l}, {N, n}, {Peer, peer}, {node(), driver}]);

%% Exit reasons of about Size bytes (past a distribution fragment, 64 KiB)
%% over every signal that carries one, in both directions: a link's EXIT,
%% a monitor's DOWN and exit/2's EXIT2, from the peer to this node and from
%% this node to the peer. Afterwards the connection is the one it was
%% (no nodedown), a link and a monitor of a bystander have not fired, and
%% the bystander still answers.
scenario({big, Size}, Peer) ->
    Big = {big, binary:copy(<<"why">>, Size div 3), lists:seq(1, 100)},
    monitor_node(Peer, true),
    Q = spawn_peer(Peer, false),
    B = local(b, true, Q),
    MQ = monitor(process, Q),
    %% From the peer: a linked process's death, a monitored one's, exit/2.
    P1 = spawn_peer(Peer, false),
    _ = local(l1, true, P1),
    sync(Peer),
    do(P1, {stop, Big}),
    G1 = got(l1),
    P2 = spawn_peer(Peer, false),
    M2 = monitor(process, P2),
    do(P2, {stop, Big}),
    G2 = receive {'DOWN', M2, _, _, R2} -> R2 after 10000 -> timeout end,
    L3 = local(l3, true, none),
    P3 = spawn_peer(Peer, false),
    ok = do(P3, {exit, L3, Big}),
    G3 = got(l3),
    %% To the peer: exit/2 to a trapping and to a plain process (whose
    %% death then comes back as a DOWN), a linked and a monitored local
    %% process's death.
    P4 = spawn_peer(Peer, true),
    exit(P4, Big),
    G4 = do(P4, inbox),
    P5 = spawn_peer(Peer, false),
    M5 = monitor(process, P5),
    exit(P5, Big),
    G5 = receive {'DOWN', M5, _, _, R5} -> R5 after 10000 -> timeout end,
    P6 = spawn_peer(Peer, true),
    L6 = local(l6, false, none),
    ok = do(P6, {link, L6}),
    L7 = local(l7, false, none),
    ok = do(P6, {monitor, L7}),
    [begin M = monitor(process, L), exit(L, Big), receive {'DOWN', M, _, _, Big} -> ok after 10000 -> exit(no_down) end end
     || L <- [L6, L7]],
    G6 = lists:sort(inbox_of(P6, 2, 1000)), % two senders: either may come first
    %% Nothing else fired, and the connection carries on.
    Bystander = alive(b, B),
    QInbox = do(Q, inbox),
    Extra = receive {'DOWN', MQ, _, _, _} -> q_down; {nodedown, Peer} -> nodedown after 100 -> none end,
    monitor_node(Peer, false),
    norm([{link, G1}, {monitor, G2}, {exit2, G3}, {trapped, G4}, {exit2_down, G5}, {peer_inbox, G6},
          {bystander, Bystander, QInbox}, {extra, Extra}],
         [{Big, big}, {P1, p1}, {P2, p2}, {P3, p3}, {L6, l6}, {L7, l7}, {self(), driver}]).

%% inbox_of(P, N, Tries) is P's inbox once it holds N messages (a large
%% signal is fragmented, and what other processes send may overtake it),
%% or as it is after Tries polls 10 ms apart.
inbox_of(P, N, Tries) ->
    case do(P, inbox) of
        In when length(In) >= N; Tries =< 1 -> In;
        _ -> timer:sleep(10), inbox_of(P, N, Tries - 1)
    end.

%% race runs Rounds rounds in which the local L and the peer's P each link
%% and unlink the other four times at once; after each, both must agree.
race(0, _, _, _) -> true;
race(K, P, L, Peer) ->
    Self = self(),
    Ops = fun(Bits, T) -> [case (Bits bsr I) band 1 of 1 -> {link, T}; 0 -> {unlink, T} end || I <- lists:seq(0, 3)] end,
    L ! ping, pong = got(l),
    spawn(fun() -> [do(P, Op) || Op <- Ops(K * 7 + 3, L)], Self ! peer_done end),
    [case Op of {link, T} -> local_do(L, {link, T}); {unlink, T} -> local_do(L, {unlink, T}) end || Op <- Ops(K, P)],
    receive peer_done -> ok end,
    sync(Peer), sync(Peer),
    A = local_linked(L, P),
    B = do(P, {linked, L}),
    case A =:= B of
        true -> race(K - 1, P, L, Peer);
        false -> {disagree, K, A, B}
    end.

local_do(L, {link, T}) -> L ! {run, fun() -> link(T) end, self()}, receive {ran, L} -> ok end;
local_do(L, {unlink, T}) -> L ! {run, fun() -> unlink(T) end, self()}, receive {ran, L} -> ok end.

local_linked(L, P) -> {links, Ls} = process_info(L, links), lists:member(P, Ls).

%% norm replaces the pids and node names of Subst in T by their roles.
norm(T, Subst) ->
    case lists:keyfind(T, 1, Subst) of
        {_, Role} -> Role;
        false when is_tuple(T) -> list_to_tuple(norm(tuple_to_list(T), Subst));
        false when is_list(T) -> [norm(E, Subst) || E <- T];
        false when is_pid(T) -> pid;
        false when is_binary(T), byte_size(T) > 1000 -> {binary, byte_size(T)};
        false -> T
    end.

%% kill_setup(Victim, K) is the observer's side of a node killed: K
%% trapping processes each link to and monitor a process of Victim, and the
%% caller monitors the node (monitor_node). The test then kills Victim
%% (erlang:halt() or SIGKILL) and calls kill_trace, which counts what
%% arrived: each process's signals, sorted, and the nodedowns.
kill_setup(Victim, K) ->
    Self = self(),
    Targets = [spawn_peer(Victim, false) || _ <- lists:seq(1, K)],
    Ws = [spawn(fun() ->
              process_flag(trap_exit, true),
              link(T), monitor(process, T),
              Self ! {w, self(), ready},
              collect([])
          end) || T <- Targets],
    [receive {w, W, ready} -> ok end || W <- Ws],
    monitor_node(Victim, true),
    sync(Victim),
    {Victim, Ws}.

kill_trace({Victim, Ws}) ->
    ND = receive {nodedown, Victim} -> 1 after 20000 -> 0 end,
    [W ! {report, self()} || W <- Ws],
    Got = [receive {got, W, Ms} -> lists:sort(Ms) after 20000 -> timeout end || W <- Ws],
    More = receive {nodedown, Victim} -> 1 after 0 -> 0 end,
    {lists:usort(Got), ND + More}.

collect(Ms) ->
    receive
        {report, From} -> From ! {got, self(), drain(Ms)};
        {'EXIT', _, R} -> collect([{exit, R} | Ms]);
        {'DOWN', _, process, _, R} -> collect([{down, R} | Ms])
    end.

%% drain takes what is still to come: up to the two signals expected, then
%% whatever is already queued.
drain(Ms) ->
    Wait = case length(Ms) >= 2 of true -> 0; false -> 10000 end,
    receive
        {'EXIT', _, R} -> drain([{exit, R} | Ms]);
        {'DOWN', _, process, _, R} -> drain([{down, R} | Ms])
    after Wait -> Ms
    end.

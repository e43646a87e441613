//go:build unix

package dist_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
	"github.com/colonyrt/colony/sysmsg"
)

// sysModule is the Erlang side of the system-message tests: sysk, a
// gen_server counting the casts inc, as sysCounter does; scenario/1, the sys
// calls an Erlang node makes of {sysk, Node}, with pids and times
// normalised so that runs against an Erlang and a Colony server compare
// equal where the answers' shapes are comparable.
const sysModule = `-module(syspeer).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2,
         scenario/1, state/1]).

start() ->
    {ok, P} = gen_server:start({local, sysk}, ?MODULE, [], []),
    P.

init([]) -> {ok, 0}.
handle_call(get, _F, S) -> {reply, S, S}.
handle_cast(inc, S) -> {noreply, S + 1}.
handle_info(_, S) -> {noreply, S}.
terminate(_, _) -> ok.

status({status, P, Mod, [PD, SS, Par, Dbg, [{header, H},
        {data, [{"Status", St}, {"Parent", Pa}, {"Logged events", Ev}]}, {data, [{"State", _}]}]]})
  when is_pid(P), is_list(PD), is_pid(Par), is_pid(Pa), is_list(Dbg) ->
    {status, Mod, SS, H, St, [element(1, E) || E <- Ev], [K || {K, _} <- Dbg]};
status(O) -> {bad_status, O}.

scenario(N) ->
    S = {sysk, N},
    R1 = sys:suspend(S),
    gen_server:cast(S, inc),
    gen_server:cast(S, inc),
    R2 = try gen_server:call(S, get, 200) catch exit:{timeout, _} -> timeout end,
    R3 = status(sys:get_status(S)),
    R4 = sys:resume(S),
    R5 = gen_server:call(S, get, 5000),
    R6 = try sys:replace_state(S, fun(_) -> error(boom) end)
         catch error:{callback_failed, {gen_server, system_replace_state}, {error, _}} -> callback_failed end,
    R7 = gen_server:call(S, get, 5000),
    R8 = sys:statistics(S, true),
    gen_server:cast(S, inc),
    R9 = case sys:statistics(S, get) of
             {ok, L} -> [K || {K, _} <- L] ++ [proplists:get_value(messages_in, L)];
             O -> O
         end,
    R10 = sys:log(S, true),
    gen_server:cast(S, inc),
    _ = gen_server:call(S, get, 5000),
    R11 = case sys:log(S, get) of
              {ok, Ev} -> [{element(1, E), tuple_size(E)} || E <- Ev];
              O2 -> O2
          end,
    R12 = status(sys:get_status(S)),
    R13 = sys:no_debug(S),
    R14 = gen:call(S, system, bogus),
    R15 = gen:call(S, system, {debug, bogus}),
    R16 = gen_server:stop(S, normal, 5000),
    R17 = try gen_server:stop(S, normal, 5000) catch exit:R -> {exit, R} end,
    [R1, R2, R3, R4, R5, R6, R7, R8, R9, R10, R11, R12, R13, R14, R15, R16, R17].

state(N) -> sys:get_state({sysk, N}).
`

// sysCounter is the Colony side of syspeer's sysk: a Server counting the
// casts inc and answering get with the count. It records what reaches
// HandleInfo (nothing should: system messages are answered before it) and
// the reason Terminate ran with.
type sysCounter struct {
	actor.ServerBase
	N     int
	mu    sync.Mutex
	infos []any
	term  chan actor.Reason
}

func (s *sysCounter) HandleCast(c *actor.Context, m any) {
	if m == actor.Atom("inc") {
		s.N++
	}
}

func (s *sysCounter) HandleCall(c *actor.Context, req actor.Request) { c.Reply(req, s.N) }

func (s *sysCounter) HandleInfo(c *actor.Context, m any) {
	s.mu.Lock()
	s.infos = append(s.infos, m)
	s.mu.Unlock()
}

func (s *sysCounter) Terminate(c *actor.Context, r actor.Reason) { s.term <- r }

// sys:suspend, resume, get_status, replace_state, statistics, log,
// unknown requests and gen_server:stop from an Erlang node get from a
// Colony Server the answers an Erlang gen_server gives, and stop runs the
// server's Terminate with the reason.
func TestErlangSysCallsColonyServer(t *testing.T) {
	erltest.Need(t, "erl", "erlc", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	dir := erltest.Compile(t, "syspeer", sysModule)
	n := startNode(t, port, dist.Config{Cookie: ck})
	e1 := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	e2 := erltest.Erl(t, port, erlName(), ck, "-pa", dir)

	srv := &sysCounter{term: make(chan actor.Reason, 1)}
	if _, err := actor.StartServer(n.sys, srv, actor.WithSpawn(actor.Name("sysk"))); err != nil {
		t.Fatal(err)
	}
	if v := e2.Eval("is_pid(syspeer:start())."); v != "true" {
		t.Fatalf("start sysk on %s: %s", e2.Name, v)
	}
	want := e1.Eval("syspeer:scenario(" + atomLit(actor.Atom(e2.Name)) + ").")
	got := e1.Eval("syspeer:scenario(" + atomLit(n.Name()) + ").")
	t.Logf("Erlang -> Erlang: %s", want)
	if got != want {
		t.Fatalf("Erlang -> Colony:\n  %s\nwant (Erlang -> Erlang):\n  %s", got, want)
	}
	const expect = `[ok,timeout,{status,{module,gen_server},suspended,"Status for generic server sysk",suspended,[],[]},` +
		`ok,2,callback_failed,2,ok,[start_time,current_time,reductions,messages_in,messages_out,1],ok,` +
		`[{in,2},{noreply,2},{in,2},{out,4}],{status,{module,gen_server},running,"Status for generic server sysk",running,` +
		`[in,noreply,in,out],[log,statistics]},ok,{ok,{error,{unknown_system_msg,bogus}}},{ok,unknown_debug},ok,{exit,noproc}]`
	if want != expect {
		t.Errorf("the Erlang reference changed: %s", want)
	}
	select {
	case r := <-srv.term:
		if r != actor.Normal {
			t.Fatalf("Terminate ran with %v, want normal", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gen_server:stop returned ok but Terminate did not run")
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.infos) != 0 {
		t.Fatalf("HandleInfo got %v: a system message reached the server's callbacks", srv.infos)
	}
}

// sys:get_state from Erlang gets the Go state's text; a system message
// to a Colony actor that is no behaviour arrives as the tuple it was, as
// to an Erlang process, and sys's call times out.
func TestErlangSysGetStateAndPlainActor(t *testing.T) {
	erltest.Need(t, "erl", "erlc", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	dir := erltest.Compile(t, "syspeer", sysModule)
	n := startNode(t, port, dist.Config{Cookie: ck})
	e := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	pid, err := actor.StartServer(n.sys, &sysCounter{N: 7, term: make(chan actor.Reason, 1)}, actor.WithSpawn(actor.Name("sysk")))
	if err != nil {
		t.Fatal(err)
	}
	defer actor.StopServer(n.sys, pid, nil, 10*time.Second)
	v := e.Eval("S = syspeer:state(" + atomLit(n.Name()) + "), {is_binary(S), binary:match(S, <<\"N:7\">>) =/= nomatch}.")
	if v != "{true,true}" {
		t.Fatalf("sys:get_state of a Colony server: %s", v)
	}
	got := make(chan any, 1)
	if _, err := n.sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { got <- m }), actor.Name("plain")); err != nil {
		t.Fatal(err)
	}
	v = e.Eval("try sys:get_state({plain, " + atomLit(n.Name()) + "}, 300) catch exit:{timeout, _} -> timeout end.")
	if v != "timeout" {
		t.Fatalf("sys:get_state of a plain actor: %s", v)
	}
	select {
	case m := <-got:
		if tu, ok := m.(etf.Tuple); !ok || len(tu) != 3 || tu[0] != actor.Atom("system") {
			t.Fatalf("the plain actor got %#v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the plain actor got nothing")
	}
}

// GenServer.stop/3 from an Elixir node stops a Colony Server: ok, and
// Terminate ran with the reason.
func TestElixirGenServerStopsColonyServer(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	bin, err := exec.LookPath("elixir")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: no elixir on PATH: GenServer.stop/3 from Elixir is not checked")
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	ebin := filepath.Join(filepath.Dir(filepath.Dir(bin)), "lib", "elixir", "ebin")
	n, e := erlPair(t, dist.Config{}, "-pa", ebin)
	if v := e.Eval("{ok, _} = application:ensure_all_started(elixir), ok."); v != "ok" {
		t.Fatalf("starting elixir: %s", v)
	}
	srv := &sysCounter{term: make(chan actor.Reason, 1)}
	if _, err := actor.StartServer(n.sys, srv, actor.WithSpawn(actor.Name("exsrv"))); err != nil {
		t.Fatal(err)
	}
	v := e.Eval("'Elixir.GenServer':stop({exsrv, " + atomLit(n.Name()) + "}, {shutdown, bye}, 5000).")
	if v != "ok" {
		t.Fatalf("GenServer.stop: %s", v)
	}
	select {
	case r := <-srv.term:
		if sw, ok := r.(actor.ShutdownWith); !ok || sw.Reason != actor.Atom("bye") {
			t.Fatalf("Terminate ran with %#v, want {shutdown, bye}", r)
		}
	default:
		t.Fatal("GenServer.stop returned ok before Terminate ran")
	}
	if v := e.Eval("try 'Elixir.GenServer':stop({exsrv, " + atomLit(n.Name()) + "}, normal, 5000) catch exit:{R, _} -> {exit, R} end."); v != "{exit,noproc}" {
		t.Fatalf("GenServer.stop of a stopped server: %s", v)
	}
}

// sysmsg from Go reaches an Erlang gen_server as sys does: suspend holds
// its casts, get_state answers its term, resume lets them through, a
// status is a term, replace_state is refused, and Stop stops it.
func TestColonySysCallsErlangServer(t *testing.T) {
	erltest.Need(t, "erl", "erlc", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	dir := erltest.Compile(t, "syspeer", sysModule)
	n := startNode(t, port, dist.Config{Cookie: ck})
	e := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	if v := e.Eval("is_pid(syspeer:start())."); v != "true" {
		t.Fatalf("start sysk: %s", v)
	}
	v, err := n.CallName(n.sys, "sysk", actor.Atom(e.Name), actor.Atom("get"), 10*time.Second)
	if err != nil || v != 0 {
		t.Fatalf("get: %v, %v", v, err)
	}
	// The Erlang server's pid, sent from the Erlang side.
	got := make(chan any, 1)
	if _, err := n.sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { got <- m }), actor.Name("me")); err != nil {
		t.Fatal(err)
	}
	e.Eval("{me, " + atomLit(n.Name()) + "} ! whereis(sysk).")
	pid, ok := recvAny(t, got).(actor.Pid)
	if !ok {
		t.Fatal("no pid")
	}
	const w = 10 * time.Second
	if err := sysmsg.Suspend(n.sys, pid, w); err != nil {
		t.Fatal(err)
	}
	actor.Cast(n.sys, pid, actor.Atom("inc"))
	if v, err := sysmsg.GetState(n.sys, pid, w); err != nil || v != 0 {
		t.Fatalf("GetState while suspended: %v, %v", v, err)
	}
	if err := sysmsg.Resume(n.sys, pid, w); err != nil {
		t.Fatal(err)
	}
	if v, err := sysmsg.GetState(n.sys, pid, w); err != nil || v != 1 {
		t.Fatalf("GetState after Resume: %v, %v", v, err)
	}
	if v, err := actor.SysCall(n.sys, pid, actor.SysRequest{Op: actor.SysGetStatus}, w); err != nil {
		t.Fatal(err)
	} else if tu, ok := v.(etf.Tuple); !ok || tu[0] != actor.Atom("status") {
		t.Fatalf("get_status: %#v", v)
	}
	if _, err := sysmsg.ReplaceState(n.sys, pid, func(s any) any { return s }, w); !errors.Is(err, dist.ErrSysReplaceRemote) {
		t.Fatalf("ReplaceState on Erlang: %v", err)
	}
	if err := sysmsg.Stop(n.sys, pid, actor.Atom("bye"), w); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if v := e.Eval("whereis(sysk)."); v != "undefined" {
		t.Fatalf("after Stop: %s", v)
	}
}

//go:build !nocolony

// The dist workload: Erlang distribution over loopback, Colony and Erlang nodes side by side.
//
// Design note.
//
// What is measured: messages per second one way (a sender sends N small messages, {m, I}, to a
// registered sink on the other node as fast as it can; the clock stops when the sink, having
// counted N, answers {done, N}) and the round-trip latency (M sequential {From, I} sent to a
// registered echo on the other node, each waiting for I back; median and p99 of the M). Four
// pairs, in one run, on one machine: Colony to Colony (two Systems, two nodes, one process),
// Colony to Erlang and Erlang to Colony, and Erlang to Erlang (two erl nodes). Every node
// registers with one EPMD-compatible registrar served by the first Colony node on a free port,
// and all traffic stays on 127.0.0.1.
//
// The senders: Colony's is a plain goroutine calling Node.SendName (a Send never blocks: the
// frames queue for the connection's writer, which writes them in batches); Erlang's is a
// compiled loop of `Target ! {m, I}` (which OTP suspends while its distribution buffer is past
// 1 MiB). The sinks and echoes are a Colony actor and a compiled Erlang process. Erlang's side
// is module distbench, compiled with erlc at start and driven through the erl node's standard
// input.
//
// Rejected: Colony nodes in separate processes (the benchmark would then also measure process
// start-up and the harness's pipes); windowed sends (what a user writes is a send loop).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

const distbenchErl = `-module(distbench).
-behaviour(gen_server).
-export([serve/0, sink/0, echo/0, throughput/2, latency/2]).
-export([init/1, handle_call/3, handle_cast/2, noop/0, call_latency/2, spawn_rate/4]).

%% serve registers the sink, the echo and the gen_server dkv, then evaluates
%% commands read from standard input, one term a line, printing each result
%% as "=> Term".
serve() ->
    register(dsink, spawn(fun sink/0)),
    register(decho, spawn(fun echo/0)),
    {ok, _} = gen_server:start({local, dkv}, ?MODULE, [], []),
    loop().

init([]) -> {ok, none}.
handle_call(ping, _From, S) -> {reply, pong, S}.
handle_cast(_, S) -> {noreply, S}.

noop() -> ok.

%% call_latency: M sequential gen_server:call({dkv, Node}, ping).
call_latency(Node, M) ->
    Ts = [call_rtt(Node) || _ <- lists:seq(1, M)],
    S = lists:sort(Ts),
    {ok, lists:nth(max(1, M div 2), S), lists:nth(max(1, (M * 99) div 100), S)}.

call_rtt(Node) ->
    T0 = erlang:monotonic_time(nanosecond),
    pong = gen_server:call({dkv, Node}, ping, 10000),
    erlang:monotonic_time(nanosecond) - T0.

%% spawn_rate: K spawn(Node, Mod, noop, []) by C processes, each waiting
%% for its spawns one at a time (spawn/4 returns the pid: a round trip).
spawn_rate(Node, Mod, K, C) ->
    Me = self(),
    T0 = erlang:monotonic_time(nanosecond),
    Ps = [spawn_link(fun() -> spawner(Node, Mod, K div C), Me ! {spawned, self()} end)
          || _ <- lists:seq(1, C)],
    [receive {spawned, P} -> ok end || P <- Ps],
    {ok, erlang:monotonic_time(nanosecond) - T0}.

spawner(_, _, 0) -> ok;
spawner(Node, Mod, I) ->
    P = spawn(Node, Mod, noop, []),
    true = is_pid(P),
    spawner(Node, Mod, I - 1).

loop() ->
    case io:read('') of
        {ok, {throughput, Node, N}} -> out(throughput({dsink, Node}, N)), loop();
        {ok, {latency, Node, M}} -> out(latency({decho, Node}, M)), loop();
        {ok, {call_latency, Node, M}} -> out(call_latency(Node, M)), loop();
        {ok, {spawn_rate, Node, Mod, K, C}} -> out(spawn_rate(Node, Mod, K, C)), loop();
        {ok, {ping, Node}} -> out(net_adm:ping(Node)), loop();
        {ok, Other} -> out({unknown, Other}), loop();
        _ -> halt()
    end.

out(T) -> io:format("=> ~0p~n", [T]).

sink() ->
    receive
        {start, From, N} -> count(From, N, N)
    end.

count(From, N, 0) -> From ! {done, N}, sink();
count(From, N, K) -> receive {m, _} -> count(From, N, K - 1) end.

echo() ->
    receive
        {From, X} -> From ! X, echo()
    end.

throughput(Target, N) ->
    Target ! {start, self(), N},
    T0 = erlang:monotonic_time(nanosecond),
    send(Target, 1, N),
    receive {done, N} -> ok end,
    T1 = erlang:monotonic_time(nanosecond),
    {ok, T1 - T0}.

send(_, I, N) when I > N -> ok;
send(Target, I, N) -> Target ! {m, I}, send(Target, I + 1, N).

latency(Target, M) ->
    Ts = [rtt(Target, I) || I <- lists:seq(1, M)],
    S = lists:sort(Ts),
    {ok, lists:nth(max(1, M div 2), S), lists:nth(max(1, (M * 99) div 100), S)}.

rtt(Target, I) ->
    T0 = erlang:monotonic_time(nanosecond),
    Target ! {self(), I},
    receive I -> erlang:monotonic_time(nanosecond) - T0 end.
`

// distResult is one sample of one pair.
type distResult struct {
	msgsPerSec    float64
	p50, p99      time.Duration
	throughputErr error
	latencyErr    error
	calls         distCallResult // dist_call.go
}

type distPair struct {
	name string // "Colony -> Erlang"
	run  func(n, m int) distResult
}

func distMain(args []string) int {
	fs := flag.NewFlagSet("dist", flag.ExitOnError)
	runs := fs.Int("runs", 3, "samples per pair")
	scale := fs.Float64("scale", 1, "multiplies N (200k messages) and M (20k round trips)")
	outDir := fs.String("out", "out", "directory for dist.md")
	noErl := fs.Bool("no-erlang", false, "leave the pairs with Erlang out")
	fs.Parse(args)
	n := max(100, int(200000**scale))
	m := max(10, int(20000**scale))

	env, err := startDistEnv(!*noErl)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench dist:", err)
		return 1
	}
	defer env.close()
	for _, note := range env.notes {
		fmt.Fprintln(os.Stderr, "bench dist:", note)
	}
	pairs := env.pairs()
	fmt.Fprintf(os.Stderr, "bench dist: N=%d messages, M=%d round trips, %d run(s), pairs: %d\n", n, m, *runs, len(pairs))
	results := make(map[string][]distResult)
	for r := 1; r <= *runs; r++ { // interleaved: run r of every pair, then r+1
		for _, p := range pairs {
			res := p.run(n, m)
			results[p.name] = append(results[p.name], res)
			fmt.Fprintf(os.Stderr, "   %-18s run %d/%d: %s msgs/s, rtt p50 %v p99 %v %s\n", p.name, r, *runs,
				fmtRate(res.msgsPerSec), res.p50, res.p99, errNote(res))
			fmt.Fprintf(os.Stderr, "   %-18s run %d/%d: %s\n", p.name, r, *runs, res.calls)
		}
	}
	table := distTable(pairs, results, n, m, *runs, env.notes) + "\n" + distCallTable(pairs, results, m, *runs)
	fmt.Println(table)
	if err := os.MkdirAll(*outDir, 0o755); err == nil {
		os.WriteFile(filepath.Join(*outDir, "dist.md"), []byte(table), 0o644)
	}
	for _, rs := range results {
		for _, r := range rs {
			if r.throughputErr != nil || r.latencyErr != nil || r.calls.err != nil {
				return 1
			}
		}
	}
	return 0
}

func errNote(r distResult) string {
	var s []string
	if r.throughputErr != nil {
		s = append(s, "throughput: "+r.throughputErr.Error())
	}
	if r.latencyErr != nil {
		s = append(s, "latency: "+r.latencyErr.Error())
	}
	return strings.Join(s, "; ")
}

func fmtRate(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fk", v/1000)
}

// distTable renders min/median/max per pair.
func distTable(pairs []distPair, results map[string][]distResult, n, m, runs int, notes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Distribution over loopback: %d messages one way ({m, I} to a registered sink, msgs/s), "+
		"%d sequential round trips ({From, I} to a registered echo); min / median / max of %d runs.\n\n", n, m, runs)
	b.WriteString("| pair | msgs/s (min / median / max) | round trip p50 (median of runs) | round trip p99 (median of runs) |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, p := range pairs {
		rs := results[p.name]
		var rates []float64
		var p50s, p99s []time.Duration
		for _, r := range rs {
			if r.throughputErr == nil {
				rates = append(rates, r.msgsPerSec)
			}
			if r.latencyErr == nil {
				p50s = append(p50s, r.p50)
				p99s = append(p99s, r.p99)
			}
		}
		slices.Sort(rates)
		slices.Sort(p50s)
		slices.Sort(p99s)
		rate := "failed"
		if len(rates) > 0 {
			rate = fmt.Sprintf("%s / %s / %s", fmtRate(rates[0]), fmtRate(rates[len(rates)/2]), fmtRate(rates[len(rates)-1]))
		}
		p50, p99 := "failed", "failed"
		if len(p50s) > 0 {
			p50 = fmtDur(p50s[len(p50s)/2])
			p99 = fmtDur(p99s[len(p99s)/2])
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", p.name, rate, p50, p99)
	}
	for _, note := range notes {
		fmt.Fprintf(&b, "\n%s\n", note)
	}
	return b.String()
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/1e3) }

// distEnv holds the nodes: Colony nodes a (driver) and b (target), Erlang nodes e1 (driver) and
// e2 (target).
type distEnv struct {
	sysA, sysB *actor.System
	a, b       *dist.Node
	inbox      chan any // what a's driver actor receives
	driver     actor.Pid
	e1, e2     *erlNode
	notes      []string
	tmp        string
}

func startDistEnv(withErlang bool) (*distEnv, error) {
	env := &distEnv{}
	port, err := freeTCPPort()
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cookie := fmt.Sprintf("bench%d", time.Now().UnixNano())
	pid := os.Getpid()
	mk := func(name string, mode dist.EPMDMode) (*actor.System, *dist.Node, error) {
		sys, err := actor.Start(actor.Config{})
		if err != nil {
			return nil, nil, err
		}
		n, err := dist.Start(sys, dist.Config{Name: name, Cookie: cookie, EPMD: mode, EPMDPort: port, Logger: quiet})
		if err != nil {
			sys.Shutdown(context.Background())
			return nil, nil, err
		}
		return sys, n, nil
	}
	if env.sysA, env.a, err = mk(fmt.Sprintf("bencha%d@127.0.0.1", pid), dist.EPMDServe); err != nil {
		return nil, err
	}
	if env.sysB, env.b, err = mk(fmt.Sprintf("benchb%d@127.0.0.1", pid), dist.EPMDExternal); err != nil {
		env.close()
		return nil, err
	}
	env.inbox = make(chan any, 1024)
	env.driver, _ = env.sysA.Spawn(chanActor(env.inbox))
	env.sysB.Spawn(&distSink{}, actor.Name("dsink"))
	env.sysB.Spawn(distEcho{}, actor.Name("decho"))
	if err := env.startCallTargets(); err != nil { // dist_call.go
		env.close()
		return nil, err
	}
	if !withErlang {
		env.notes = append(env.notes, "Erlang pairs left out (-no-erlang).")
		return env, nil
	}
	if _, err := exec.LookPath("erl"); err != nil {
		env.notes = append(env.notes, "Erlang pairs NOT MEASURED: erl is not on PATH.")
		return env, nil
	}
	if env.tmp, err = os.MkdirTemp("", "distbench"); err != nil {
		env.close()
		return nil, err
	}
	src := filepath.Join(env.tmp, "distbench.erl")
	os.WriteFile(src, []byte(distbenchErl), 0o644)
	if out, err := exec.Command("erlc", "-o", env.tmp, src).CombinedOutput(); err != nil {
		env.close()
		return nil, fmt.Errorf("erlc: %v: %s", err, out)
	}
	for i, pp := range []**erlNode{&env.e1, &env.e2} {
		if *pp, err = startErl(fmt.Sprintf("bench%d_%d@127.0.0.1", i+1, pid), cookie, port, env.tmp); err != nil {
			env.close()
			return nil, err
		}
	}
	// Connect everything before the clock: a ping each way.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, peer := range []string{string(env.b.Name()), env.e2.name} {
		if err := env.a.Ping(ctx, actor.Atom(peer)); err != nil {
			env.close()
			return nil, fmt.Errorf("ping %s: %w", peer, err)
		}
	}
	for _, peer := range []string{string(env.b.Name()), env.e2.name} {
		if v, err := env.e1.eval(fmt.Sprintf("{ping, '%s'}.", peer), 20*time.Second); err != nil || v != "pong" {
			env.close()
			return nil, fmt.Errorf("erl ping %s: %s %v", peer, v, err)
		}
	}
	return env, nil
}

func (env *distEnv) close() {
	for _, e := range []*erlNode{env.e1, env.e2} {
		if e != nil {
			e.stop()
		}
	}
	for _, sys := range []*actor.System{env.sysB, env.sysA} { // a serves the registrar: last
		if sys != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sys.Shutdown(ctx)
			cancel()
		}
	}
	if env.tmp != "" {
		os.RemoveAll(env.tmp)
	}
}

func (env *distEnv) pairs() []distPair {
	ps := []distPair{{name: "Colony -> Colony", run: func(n, m int) distResult {
		r := env.colonyTo(string(env.b.Name()), n, m)
		r.calls = env.colonyCalls(string(env.b.Name()), "noop", m)
		return r
	}}}
	if env.e1 != nil {
		ps = append(ps,
			distPair{name: "Colony -> Erlang", run: func(n, m int) distResult {
				r := env.colonyTo(env.e2.name, n, m)
				r.calls = env.colonyCalls(env.e2.name, "distbench:noop", m)
				return r
			}},
			distPair{name: "Erlang -> Colony", run: func(n, m int) distResult {
				r := env.erlangTo(string(env.b.Name()), n, m)
				r.calls = env.erlangCalls(string(env.b.Name()), "colony", m)
				return r
			}},
			distPair{name: "Erlang -> Erlang", run: func(n, m int) distResult {
				r := env.erlangTo(env.e2.name, n, m)
				r.calls = env.erlangCalls(env.e2.name, "distbench", m)
				return r
			}},
		)
	}
	return ps
}

// colonyTo runs both measurements from Colony node a to node `to`.
func (env *distEnv) colonyTo(to string, n, m int) distResult {
	var r distResult
	node := actor.Atom(to)
	self := env.driver
	wait := func(d time.Duration) (any, error) {
		select {
		case v := <-env.inbox:
			return v, nil
		case <-time.After(d):
			return nil, errors.New("timed out")
		}
	}
	// Throughput.
	env.a.SendName(self, "dsink", node, etf.Tuple{actor.Atom("start"), self, n})
	start := time.Now()
	for i := 1; i <= n; i++ {
		for {
			err := env.a.SendName(self, "dsink", node, etf.Tuple{actor.Atom("m"), i})
			if !errors.Is(err, dist.ErrBusy) {
				break
			}
			time.Sleep(50 * time.Microsecond) // the queue is full: let the writer drain it
		}
	}
	if v, err := wait(2 * time.Minute); err != nil {
		r.throughputErr = err
	} else if t, ok := v.(etf.Tuple); !ok || len(t) != 2 || t[0] != actor.Atom("done") || t[1] != n {
		r.throughputErr = fmt.Errorf("sink answered %v", v)
	} else {
		r.msgsPerSec = float64(n) / time.Since(start).Seconds()
	}
	// Latency.
	rtts := make([]time.Duration, 0, m)
	for i := 1; i <= m; i++ {
		t0 := time.Now()
		env.a.SendName(self, "decho", node, etf.Tuple{self, i})
		v, err := wait(10 * time.Second)
		if err != nil || v != i {
			r.latencyErr = fmt.Errorf("round trip %d: %v %v", i, v, err)
			return r
		}
		rtts = append(rtts, time.Since(t0))
	}
	slices.Sort(rtts)
	r.p50, r.p99 = rtts[max(0, m/2-1)], rtts[max(0, m*99/100-1)]
	return r
}

// erlangTo runs both measurements from Erlang node e1 to node `to`.
func (env *distEnv) erlangTo(to string, n, m int) distResult {
	var r distResult
	v, err := env.e1.eval(fmt.Sprintf("{throughput, '%s', %d}.", to, n), 3*time.Minute)
	var ns int64
	if err == nil {
		_, err = fmt.Sscanf(v, "{ok,%d}", &ns)
	}
	if err != nil || ns <= 0 {
		r.throughputErr = fmt.Errorf("erl: %s %v", v, err)
	} else {
		r.msgsPerSec = float64(n) / (float64(ns) / 1e9)
	}
	v, err = env.e1.eval(fmt.Sprintf("{latency, '%s', %d}.", to, m), 3*time.Minute)
	var p50, p99 int64
	if err == nil {
		_, err = fmt.Sscanf(v, "{ok,%d,%d}", &p50, &p99)
	}
	if err != nil {
		r.latencyErr = fmt.Errorf("erl: %s %v", v, err)
	} else {
		r.p50, r.p99 = time.Duration(p50), time.Duration(p99)
	}
	return r
}

type chanActor chan any

func (c chanActor) Receive(_ *actor.Context, msg any) { c <- msg }

// distSink counts {m, I} messages after a {start, From, N} and answers {done, N}.
type distSink struct {
	from      actor.Pid
	n, remain int
}

func (s *distSink) Receive(c *actor.Context, msg any) {
	t, ok := msg.(etf.Tuple)
	if !ok {
		return
	}
	switch {
	case len(t) == 3 && t[0] == actor.Atom("start"):
		s.from, _ = t[1].(actor.Pid)
		s.n, _ = t[2].(int)
		s.remain = s.n
	case len(t) == 2 && t[0] == actor.Atom("m"):
		if s.remain--; s.remain == 0 {
			c.Send(s.from, etf.Tuple{actor.Atom("done"), s.n})
		}
	}
}

// distEcho answers {From, X} with X.
type distEcho struct{}

func (distEcho) Receive(c *actor.Context, msg any) {
	if t, ok := msg.(etf.Tuple); ok && len(t) == 2 {
		if from, ok := t[0].(actor.Pid); ok {
			c.Send(from, t[1])
		}
	}
}

// erlNode is an erl node running distbench:serve().
type erlNode struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startErl(name, cookie string, epmdPort int, dir string) (*erlNode, error) {
	cmd := exec.Command("erl", "-noshell", "-name", name, "-setcookie", cookie, "-start_epmd", "false",
		"-kernel", "inet_dist_use_interface", "{127,0,0,1}", "-pa", dir, "-eval", "distbench:serve()")
	cmd.Env = append(os.Environ(), "ERL_EPMD_ADDRESS=127.0.0.1", "ERL_EPMD_PORT="+strconv.Itoa(epmdPort))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &erlNode{name: name, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	// Wait until it answers (and has registered with the registrar).
	if v, err := e.eval(fmt.Sprintf("{ping, '%s'}.", name), 30*time.Second); err != nil || v != "pong" {
		e.stop()
		return nil, fmt.Errorf("erl %s did not start: %s %v", name, v, err)
	}
	return e, nil
}

// eval sends one command and reads its "=> " line.
func (e *erlNode) eval(cmd string, d time.Duration) (string, error) {
	if _, err := fmt.Fprintln(e.in, cmd); err != nil {
		return "", err
	}
	got := make(chan string, 1)
	go func() {
		for e.out.Scan() {
			if v, ok := strings.CutPrefix(e.out.Text(), "=> "); ok {
				got <- v
				return
			}
		}
		close(got)
	}()
	select {
	case v, ok := <-got:
		if !ok {
			return "", errors.New("erl exited")
		}
		return v, nil
	case <-time.After(d):
		e.stop() // the reader goroutine ends with the process
		return "", fmt.Errorf("no answer within %v", d)
	}
}

func (e *erlNode) stop() {
	e.in.Close()
	done := make(chan struct{})
	go func() { e.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

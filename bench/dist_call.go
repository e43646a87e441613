//go:build !nocolony

// The dist workload's calls and spawns: a gen_server call round trip and a remote spawn rate
// across nodes, for the same four pairs as dist.go (Colony and Erlang, both ways).
//
// What is measured, per pair:
//   - call round trip: M sequential calls of the registered server dkv on the other node
//     (gen_server:call({dkv, Node}, ping) answered pong; Colony's caller is Node.CallName from a
//     plain goroutine, its callee an actor.Server), median and p99 of the M. Each call is what
//     OTP's gen:call does: a monitor of the callee, the request, the reply to the monitor's
//     alias, the demonitor: three frames out, one back.
//   - spawn rate: K remote spawns of a behaviour that exits at once (colony:noop, a Go behaviour
//     registered with RegisterSpawn; distbench:noop/0 on Erlang), each waiting for its reply
//     (Node.Spawn; Erlang's spawn/4, which returns the pid): by one requester (sequential, so
//     1/round trip), and by 8 requesters at once.
package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
)

// distCallResult is one sample of calls and spawns of one pair.
type distCallResult struct {
	p50, p99           time.Duration // call round trip
	spawnSeq, spawnPar float64       // spawns/s, 1 and distSpawners requesters
	err                error
}

// distSpawners is the number of concurrent requesters of the parallel spawn rate.
const distSpawners = 8

func (r distCallResult) String() string {
	if r.err != nil {
		return "calls/spawns: " + r.err.Error()
	}
	return fmt.Sprintf("call p50 %v p99 %v, spawns/s %s sequential, %s by %d", r.p50, r.p99,
		fmtRate(r.spawnSeq), fmtRate(r.spawnPar), distSpawners)
}

// distKV is the Colony dkv: ping -> pong.
type distKV struct{ actor.ServerBase }

func (distKV) HandleCall(c *actor.Context, req actor.Request) {
	if req.Msg == actor.Atom("ping") {
		c.Reply(req, actor.Atom("pong"))
		return
	}
	c.ReplyError(req, actor.ErrUnhandled)
}

// noopActor exits as soon as it starts.
type noopActor struct{}

func (noopActor) Init(c *actor.Context)       { c.Stop(actor.Normal) }
func (noopActor) Receive(*actor.Context, any) {}

// startCallTargets starts node b's dkv and registers its noop behaviour.
func (env *distEnv) startCallTargets() error {
	if _, err := actor.StartServer(env.sysB, distKV{}, actor.WithSpawn(actor.Name("dkv"))); err != nil {
		return err
	}
	return env.b.RegisterSpawn("noop", func([]any) (actor.Actor, error) { return noopActor{}, nil })
}

// spawnCounts are the spawns of one sample: sequential, and in all by distSpawners.
func spawnCounts(m int) (seq, par int) {
	return max(10, m/4), max(distSpawners, m/2)
}

// colonyCalls measures from Colony node a to node `to`; spawnName is what a spawns there.
func (env *distEnv) colonyCalls(to, spawnName string, m int) distCallResult {
	var r distCallResult
	node := actor.Atom(to)
	rtts := make([]time.Duration, 0, m)
	for range m {
		t0 := time.Now()
		v, err := env.a.CallName(env.sysA, "dkv", node, actor.Atom("ping"), 10*time.Second)
		if err != nil || v != actor.Atom("pong") {
			r.err = fmt.Errorf("call: %v %v", v, err)
			return r
		}
		rtts = append(rtts, time.Since(t0))
	}
	slices.Sort(rtts)
	r.p50, r.p99 = rtts[max(0, m/2-1)], rtts[max(0, m*99/100-1)]

	seq, par := spawnCounts(m)
	spawn := func(k int) error {
		for range k {
			if _, err := env.a.Spawn(env.sysA, node, spawnName); err != nil {
				return err
			}
		}
		return nil
	}
	t0 := time.Now()
	if err := spawn(seq); err != nil {
		r.err = fmt.Errorf("spawn: %w", err)
		return r
	}
	r.spawnSeq = float64(seq) / time.Since(t0).Seconds()
	var wg sync.WaitGroup
	errs := make(chan error, distSpawners)
	t0 = time.Now()
	for range distSpawners {
		wg.Go(func() {
			if err := spawn(par / distSpawners); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	r.spawnPar = float64(par/distSpawners*distSpawners) / time.Since(t0).Seconds()
	select {
	case err := <-errs:
		r.err = fmt.Errorf("spawn: %w", err)
	default:
	}
	return r
}

// erlangCalls measures from Erlang node e1 to node `to`; mod is the module of the noop it
// spawns there (colony for a Colony node: colony:noop is the registered behaviour).
func (env *distEnv) erlangCalls(to, mod string, m int) distCallResult {
	var r distCallResult
	v, err := env.e1.eval(fmt.Sprintf("{call_latency, '%s', %d}.", to, m), 3*time.Minute)
	var p50, p99 int64
	if err == nil {
		_, err = fmt.Sscanf(v, "{ok,%d,%d}", &p50, &p99)
	}
	if err != nil {
		r.err = fmt.Errorf("erl call: %s %v", v, err)
		return r
	}
	r.p50, r.p99 = time.Duration(p50), time.Duration(p99)
	seq, par := spawnCounts(m)
	rate := func(k, c int) (float64, error) {
		v, err := env.e1.eval(fmt.Sprintf("{spawn_rate, '%s', %s, %d, %d}.", to, mod, k, c), 3*time.Minute)
		var ns int64
		if err == nil {
			_, err = fmt.Sscanf(v, "{ok,%d}", &ns)
		}
		if err != nil || ns <= 0 {
			return 0, fmt.Errorf("erl spawn: %s %v", v, err)
		}
		return float64(k/c*c) / (float64(ns) / 1e9), nil
	}
	if r.spawnSeq, err = rate(seq, 1); err != nil {
		r.err = err
		return r
	}
	if r.spawnPar, err = rate(par, distSpawners); err != nil {
		r.err = err
	}
	return r
}

// distCallTable renders the calls and spawns: min / median / max per pair.
func distCallTable(pairs []distPair, results map[string][]distResult, m, runs int) string {
	var b strings.Builder
	seq, par := spawnCounts(m)
	fmt.Fprintf(&b, "Calls and spawns across nodes: %d sequential gen_server calls (ping -> pong); %d remote spawns "+
		"of a behaviour that exits at once, one at a time, and %d by %d requesters at once; min / median / max of %d runs.\n\n",
		m, seq, par, distSpawners, runs)
	b.WriteString("| pair | call p50 | call p99 | spawns/s, sequential | spawns/s, 8 requesters |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	mmm := func(xs []float64) string {
		if len(xs) == 0 {
			return "failed"
		}
		slices.Sort(xs)
		return fmt.Sprintf("%s / %s / %s", fmtRate(xs[0]), fmtRate(xs[len(xs)/2]), fmtRate(xs[len(xs)-1]))
	}
	mmmDur := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "failed"
		}
		slices.Sort(ds)
		return fmt.Sprintf("%s / %s / %s", fmtDur(ds[0]), fmtDur(ds[len(ds)/2]), fmtDur(ds[len(ds)-1]))
	}
	for _, p := range pairs {
		var p50s, p99s []time.Duration
		var seqs, pars []float64
		for _, r := range results[p.name] {
			if r.calls.err != nil {
				continue
			}
			p50s, p99s = append(p50s, r.calls.p50), append(p99s, r.calls.p99)
			seqs, pars = append(seqs, r.calls.spawnSeq), append(pars, r.calls.spawnPar)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", p.name, mmmDur(p50s), mmmDur(p99s), mmm(seqs), mmm(pars))
	}
	return b.String()
}

//go:build unix

// Package chaos is a chaos test of Colony clusters: three Colony worker
// nodes, each a process of its own, are SIGKILLed and restarted at random
// while a client node keeps calling their supervised workers.
//
// It runs for 15 s by default, 110 s with COLONY_SOAK=1, and is skipped
// with -short. The child processes are this test binary run again with
// CHAOS_CHILD set (TestMain), so no separate build is needed.
package chaos

// What it checks:
//
//  1. Every call returns, a reply or an error, within its timeout (plus a
//     slack for a loaded machine): none hangs on a node that died.
//  2. No monitor or link fires twice: a watcher actor monitors and links
//     every worker it sees in the group, once, and counts the Downs per
//     monitor and the Exits per link; a call's own monitor, once
//     demonitored with flush, never delivers a Down.
//  3. Every monitor and link of a worker fires: at the end every worker
//     node is killed, and every monitor and link left must fire
//     (noconnection); and the client's pg view of the group empties.
//  4. Liveness: in a quiet period at the end, with every node restarted,
//     each node's workers serve calls again (they rejoined the group, their
//     node reconnected through its seeds).
//  5. No leaks: the client node's goroutines (goleak, TestMain) and file
//     descriptors are back to what they were.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/internal/disttest"
)

const (
	nodes          = 3
	workersPerNode = 4
	clients        = 8
	callTimeout    = time.Second
	// slack is what a call may take past its timeout on a loaded machine
	// (the scheduler that runs the caller's timeout may be late).
	slack = 2 * time.Second
)

// stats are the load's outcomes. Guarded by mu.
type stats struct {
	mu         sync.Mutex
	calls, oks int
	errs       map[string]int
	late       []string // calls past timeout+slack
	maxTook    time.Duration
	served     map[actor.Atom]int // ok calls by node, since reset
	bad        []string           // broken invariants seen by actors
	stale      int                // replies that came after their call ended
}

func (s *stats) record(node actor.Atom, err error, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if took > s.maxTook {
		s.maxTook = took
	}
	if took > callTimeout+slack {
		s.late = append(s.late, fmt.Sprintf("a call to %s took %v (err %v)", node, took, err))
	}
	if err == nil {
		s.oks++
		s.served[node]++
		return
	}
	s.errs[errKind(err)]++
}

func (s *stats) fail(format string, args ...any) {
	s.mu.Lock()
	s.bad = append(s.bad, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func errKind(err error) string {
	var ce *actor.CallExitError
	if errors.As(err, &ce) {
		return "callee exit " + reasonKind(ce.Reason)
	}
	if strings.Contains(err.Error(), string(actor.NoConnection)) {
		return string(actor.NoConnection)
	}
	switch {
	case errors.Is(err, actor.ErrTimeout):
		return "timeout"
	case errors.Is(err, actor.ErrNoProc):
		return "noproc"
	}
	var de downError
	if errors.As(err, &de) {
		return "down " + reasonKind(de.reason)
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// reasonKind names an exit reason's kind: an atom, a tuple's tag, or the
// Go type (a panic's reason holds its stack: not for a summary).
func reasonKind(r actor.Reason) string {
	switch v := any(r).(type) {
	case actor.Atom:
		return string(v)
	case etf.Tuple:
		if len(v) > 0 {
			if a, ok := v[0].(actor.Atom); ok {
				return "{" + string(a) + ", ...}"
			}
		}
	}
	return fmt.Sprintf("%T", r)
}

// downError: the callee's monitor fired during a call (its death, or
// noconnection).
type downError struct{ reason actor.Reason }

func (e downError) Error() string { return fmt.Sprintf("callee down: %v", e.reason) }

type next struct{}

// client makes one call at a time to a random member of the group, for
// ever until stop: with actor.Call when the node carries remote calls,
// else with a message protocol of its own ({call, From, Tag, N} answered
// {reply, Tag, N+1}) guarded by a monitor of the callee, as gen:call is.
type client struct {
	scope   *pg.Scope
	st      *stats
	stop    *atomic.Bool
	stopped chan<- struct{}
	useCall bool
	tag     int
	rng     *rand.Rand
}

func (cl *client) Receive(c *actor.Context, m any) {
	switch v := m.(type) {
	case next:
	case actor.Down:
		cl.st.fail("a call's monitor delivered a Down after it was demonitored: %+v", v)
		return
	case etf.Tuple:
		cl.st.mu.Lock()
		cl.st.stale++ // a reply after its call timed out: dropped, as gen:call's alias drops it
		cl.st.mu.Unlock()
		return
	default:
		return
	}
	if cl.stop.Load() {
		cl.stopped <- struct{}{}
		return
	}
	members := cl.scope.Members(group)
	if len(members) == 0 {
		c.SendAfter(c.Self(), next{}, 10*time.Millisecond)
		return
	}
	w := members[cl.rng.IntN(len(members))]
	id, _ := w.Remote()
	n := cl.rng.IntN(1 << 20)
	start := time.Now()
	var err error
	if cl.useCall {
		var v any
		v, err = c.Call(w, n, callTimeout)
		if err == nil && v != n+1 {
			cl.st.fail("call of %d answered %v", n, v)
		}
	} else {
		err = cl.manual(c, w, n)
	}
	cl.st.record(id.Node, err, time.Since(start))
	c.Send(c.Self(), next{})
}

func (cl *client) manual(c *actor.Context, w actor.Pid, n int) error {
	ref, err := c.Monitor(w)
	if err != nil {
		return err
	}
	cl.tag++
	tag := cl.tag
	if err := c.Send(w, etf.Tuple{atomCall, c.Self(), tag, n}); err != nil {
		c.Demonitor(ref, true)
		return err
	}
	m, err := c.Receive(func(m any) bool {
		switch v := m.(type) {
		case etf.Tuple:
			return len(v) == 3 && v[0] == atomReply && v[1] == tag
		case actor.Down:
			return v.Ref == ref
		}
		return false
	}, callTimeout)
	if err != nil {
		c.Demonitor(ref, true)
		return err
	}
	switch v := m.(type) {
	case etf.Tuple:
		c.Demonitor(ref, true)
		if v[2] != n+1 {
			cl.st.fail("call of %d answered %v", n, v[2])
		}
		return nil
	case actor.Down:
		return downError{v.Reason}
	}
	return nil
}

// watcher monitors and links every member of the group it sees, once per
// pid (it traps exits), and checks that each monitor and each link fires
// at most once.
type watcher struct {
	scope  *pg.Scope
	st     *stats
	active map[actor.Ref]actor.Pid
	seen   map[actor.Pid]bool
	fired  map[actor.Ref]bool
	downs  map[string]int     // by reason
	linked map[actor.Pid]bool // links not fired yet
	exited map[actor.Pid]bool
	exits  map[string]int // by reason
}

type scan struct{}

// watchState is what a query of the watcher returns.
type watchState struct {
	active, monitored, linked int
	downs, exits              map[string]int
}

func (w *watcher) Init(c *actor.Context) { c.SendInterval(c.Self(), scan{}, 20*time.Millisecond) }

func (w *watcher) Receive(c *actor.Context, m any) {
	switch v := m.(type) {
	case scan:
		for _, p := range w.scope.Members(group) {
			if w.seen[p] {
				continue
			}
			w.seen[p] = true
			ref, err := c.Monitor(p)
			if err != nil {
				w.st.fail("monitor of %v: %v", p, err)
				continue
			}
			w.active[ref] = p
			if err := c.Link(p); err != nil {
				w.st.fail("link of %v: %v", p, err)
				continue
			}
			w.linked[p] = true
		}
	case actor.Exit:
		if !v.From.IsRemote() { // the System's Shutdown (the watcher traps exits)
			c.Stop(v.Reason)
			return
		}
		if w.exited[v.From] {
			w.st.fail("the link to %v fired twice: %+v", v.From, v)
			return
		}
		if !w.linked[v.From] {
			w.st.fail("an Exit from %v, not linked: %+v", v.From, v)
			return
		}
		w.exited[v.From] = true
		delete(w.linked, v.From)
		w.exits[reasonKind(v.Reason)]++
	case actor.Down:
		if w.fired[v.Ref] {
			w.st.fail("monitor %v fired twice: %+v", v.Ref, v)
			return
		}
		if _, ok := w.active[v.Ref]; !ok {
			w.st.fail("a Down for a monitor the watcher does not hold: %+v", v)
			return
		}
		w.fired[v.Ref] = true
		delete(w.active, v.Ref)
		w.downs[reasonKind(v.Reason)]++
	case actor.Request:
		c.Reply(v, watchState{active: len(w.active), monitored: len(w.seen), linked: len(w.linked),
			downs: maps.Clone(w.downs), exits: maps.Clone(w.exits)})
	}
}

// child is a worker node's process.
// startChild starts a worker node: this test binary with CHAOS_CHILD set
// (TestMain).
func startChild(t *testing.T, name string, seeds []string, port int) *disttest.Child {
	t.Helper()
	return disttest.StartChild(t, name, "CHAOS_CHILD", "-name", name, "-seeds", strings.Join(seeds, ","),
		"-epmd-port", strconv.Itoa(port), "-workers", strconv.Itoa(workersPerNode))
}

// kill SIGKILLs c and fails t if c reported a race or a fatal error.
func kill(t *testing.T, c *disttest.Child) {
	t.Helper()
	c.Kill(t)
	if out := c.Output(); strings.Contains(out, "DATA RACE") || strings.Contains(out, "fatal error") {
		t.Errorf("%s reported a race or a fatal error:\n%s", c.Name, out)
	}
}

func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func workersOn(s *pg.Scope, node string) int {
	k := 0
	for _, p := range s.Members(group) {
		if id, ok := p.Remote(); ok && string(id.Node) == node {
			k++
		}
	}
	return k
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: skipped with -short")
	}
	duration := 15 * time.Second
	if os.Getenv("COLONY_SOAK") == "1" {
		duration = 110 * time.Second
	}
	fdsBefore := countFDs()

	reg, port := disttest.Registrar(t)

	tag := strconv.Itoa(os.Getpid())
	clientName := "chaosc" + tag + "@127.0.0.1"
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("chaos%d_%s@127.0.0.1", i, tag)
	}
	seeds := append([]string{clientName}, names...)

	sys, err := actor.Start(actor.Config{Reporter: func(actor.Report) {}})
	if err != nil {
		t.Fatal(err)
	}
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}
	defer func() {
		if sys != nil {
			shutdown()
		}
	}()
	node, err := dist.Start(sys, dist.Config{Name: clientName, Cookie: cookie, EPMDPort: port, EPMD: dist.EPMDExternal})
	if err != nil {
		t.Fatal(err)
	}
	scope, err := pg.Start(node)
	if err != nil {
		t.Fatal(err)
	}

	children := make([]*disttest.Child, nodes)
	defer func() {
		for _, c := range children {
			if c != nil && c.Alive() {
				kill(t, c)
			}
		}
		if t.Failed() {
			for _, c := range children {
				if c != nil {
					t.Logf("output of %s:\n%s", c.Name, c.Output())
				}
			}
		}
	}()
	for i := range children {
		children[i] = startChild(t, names[i], seeds, port)
	}
	disttest.Eventually(t, 30*time.Second, "every node's workers in the group", func() bool {
		for _, n := range names {
			if workersOn(scope, n) != workersPerNode {
				return false
			}
		}
		return true
	})

	// Remote calls or the message protocol: a call of a worker says which.
	_, probe := actor.Call[int](sys, scope.Members(group)[0], 1, 5*time.Second)
	useCall := !errors.Is(probe, actor.ErrNoRoute)
	t.Logf("load: %s", map[bool]string{true: "actor.Call across nodes", false: "messages and monitors"}[useCall])

	st := &stats{errs: map[string]int{}, served: map[actor.Atom]int{}}
	w := &watcher{scope: scope, st: st, active: map[actor.Ref]actor.Pid{}, seen: map[actor.Pid]bool{},
		fired: map[actor.Ref]bool{}, downs: map[string]int{}, linked: map[actor.Pid]bool{},
		exited: map[actor.Pid]bool{}, exits: map[string]int{}}
	wpid, err := sys.Spawn(w, actor.TrapExit())
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	stopped := make(chan struct{}, clients)
	for i := range clients {
		pid, err := sys.Spawn(&client{scope: scope, st: st, stop: &stop, stopped: stopped, useCall: useCall,
			rng: rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))})
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(pid, next{})
	}

	// Chaos: every 0.3 to 1.2 s, kill a live node (keeping one alive at
	// least) or restart a dead one.
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	kills, restarts := 0, 0
	end := time.Now().Add(duration)
	for time.Now().Before(end) {
		pause := time.NewTimer(300*time.Millisecond + time.Duration(rng.IntN(900))*time.Millisecond)
		<-pause.C
		var live, dead []int
		for i, c := range children {
			if c.Alive() {
				live = append(live, i)
			} else {
				dead = append(dead, i)
			}
		}
		if len(dead) == 0 || (len(live) > 1 && rng.IntN(2) == 0) {
			i := live[rng.IntN(len(live))]
			kill(t, children[i])
			kills++
		} else {
			i := dead[rng.IntN(len(dead))]
			children[i] = startChild(t, names[i], seeds, port)
			restarts++
		}
	}

	// Quiet period: every node up again; each serves calls once more.
	for i, c := range children {
		if !c.Alive() {
			children[i] = startChild(t, names[i], seeds, port)
			restarts++
		}
	}
	disttest.Eventually(t, 30*time.Second, "every restarted node's workers in the group", func() bool {
		for _, n := range names {
			if workersOn(scope, n) != workersPerNode {
				return false
			}
		}
		return true
	})
	st.mu.Lock()
	st.served = map[actor.Atom]int{}
	st.mu.Unlock()
	disttest.Eventually(t, 30*time.Second, "every node to serve calls after the chaos", func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, n := range names {
			if st.served[actor.Atom(n)] < 10 {
				return false
			}
		}
		return true
	})

	// Stop the load; kill every node: every monitor left fires, once.
	stop.Store(true)
	for range clients {
		select {
		case <-stopped:
		case <-time.After(callTimeout + slack + 10*time.Second):
			t.Fatalf("a client did not stop: a call hangs")
		}
	}
	for _, c := range children {
		kill(t, c)
	}
	var ws watchState
	disttest.Eventually(t, 20*time.Second, "every monitor and link of a worker to fire", func() bool {
		v, err := actor.Call[watchState](sys, wpid, "state", 5*time.Second)
		ws = v
		return err == nil && v.active == 0 && v.linked == 0
	})
	disttest.Eventually(t, 10*time.Second, "the client node to see every worker node down", func() bool {
		return len(node.Nodes()) == 0
	})
	disttest.Eventually(t, 10*time.Second, "the group to be empty with every worker node dead", func() bool {
		return len(scope.Members(group)) == 0
	})

	st.mu.Lock()
	t.Logf("%v: %d kills, %d restarts; %d calls, %d ok, errors %v, %d stale replies; slowest call %v; "+
		"%d workers monitored and linked, Downs %v, Exits %v", duration, kills, restarts, st.calls, st.oks, st.errs,
		st.stale, st.maxTook, ws.monitored, ws.downs, ws.exits)
	for _, b := range st.bad {
		t.Error(b)
	}
	for _, l := range st.late {
		t.Error(l)
	}
	if st.oks < st.calls/2 {
		t.Errorf("only %d of %d calls succeeded", st.oks, st.calls)
	}
	st.mu.Unlock()
	if ws.downs[string(actor.NoConnection)] == 0 || ws.exits[string(actor.NoConnection)] == 0 {
		t.Errorf("no monitor or no link fired with noconnection: Downs %v, Exits %v", ws.downs, ws.exits)
	}

	// No leaks: the node's goroutines (goleak in TestMain) and fds.
	shutdown()
	sys = nil
	reg.Close()
	disttest.Eventually(t, 10*time.Second, fmt.Sprintf("the fds back to %d (now %d)", fdsBefore, countFDs()), func() bool {
		return countFDs() <= fdsBefore
	})
}

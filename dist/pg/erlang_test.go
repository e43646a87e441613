//go:build unix

package pg_test

// Differential test against Erlang/OTP's pg: one scenario of joins, leaves,
// deaths and a node's halt, run with a Colony node and an Erlang node, and
// again with two Erlang nodes; after every step both runs must settle to
// the same views (each node's members of each group, counted by node), and
// those views must be the model's.

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/internal/disttest"
)

// side is one node of the scenario, Colony or Erlang.
type side interface {
	node() actor.Atom
	join(t *testing.T, group, member string)
	leave(t *testing.T, group, member string)
	kill(t *testing.T, member string)
	// view counts group's members by node, as this side sees them.
	view(t *testing.T, group string) map[actor.Atom]int
	connect(t *testing.T, to actor.Atom)
	halt(t *testing.T)
}

type colonySide struct {
	n       *node
	members map[string]actor.Pid
}

func (c *colonySide) node() actor.Atom { return c.n.Name() }

func (c *colonySide) member(t *testing.T, name string) actor.Pid {
	if p, ok := c.members[name]; ok {
		return p
	}
	p := spawnIdle(t, c.n.sys)
	c.members[name] = p
	return p
}

func (c *colonySide) join(t *testing.T, group, member string) {
	if err := c.n.scope.Join(c.n.sys, actor.Atom(group), c.member(t, member)); err != nil {
		t.Fatalf("join: %v", err)
	}
}

func (c *colonySide) leave(t *testing.T, group, member string) {
	if err := c.n.scope.Leave(c.n.sys, actor.Atom(group), c.member(t, member)); err != nil {
		t.Fatalf("leave: %v", err)
	}
}

func (c *colonySide) kill(t *testing.T, member string) { c.n.sys.Exit(c.member(t, member), actor.Kill) }

func (c *colonySide) view(t *testing.T, group string) map[actor.Atom]int {
	return byNode(c.n.scope.Members(actor.Atom(group)), c.n.Name())
}

func (c *colonySide) connect(t *testing.T, to actor.Atom) {
	if err := c.n.Ping(disttest.Ctx(t, 10*time.Second), to); err != nil {
		t.Fatal(err)
	}
}

func (c *colonySide) halt(t *testing.T) {
	if err := c.n.Stop(disttest.Ctx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}

type erlSide struct {
	e       *erltest.Node
	members map[string]bool
}

func newErlSide(t *testing.T, port int, cookie string) *erlSide {
	e := erltest.Erl(t, port, disttest.UniqueName("erlpg"), cookie)
	if v := e.Eval("{ok, _} = pg:start_link(), ok."); v != "ok" {
		t.Fatalf("pg:start_link() on %s: %s", e.Name, v)
	}
	return &erlSide{e: e, members: map[string]bool{}}
}

func (e *erlSide) node() actor.Atom { return actor.Atom(e.e.Name) }

func (e *erlSide) member(name string) string {
	if !e.members[name] {
		e.members[name] = true
		e.e.Eval(fmt.Sprintf("register(%s, spawn(fun() -> receive stop -> ok end end)).", name))
	}
	return "whereis(" + name + ")"
}

func (e *erlSide) join(t *testing.T, group, member string) {
	if v := e.e.Eval(fmt.Sprintf("pg:join(%s, %s).", group, e.member(member))); v != "ok" {
		t.Fatalf("pg:join on %s: %s", e.e.Name, v)
	}
}

func (e *erlSide) leave(t *testing.T, group, member string) {
	if v := e.e.Eval(fmt.Sprintf("pg:leave(%s, %s).", group, e.member(member))); v != "ok" {
		t.Fatalf("pg:leave on %s: %s", e.e.Name, v)
	}
}

func (e *erlSide) kill(t *testing.T, member string) {
	e.e.Eval(fmt.Sprintf("exit(%s, kill).", e.member(member)))
}

func (e *erlSide) view(t *testing.T, group string) map[actor.Atom]int {
	v := e.e.Eval(fmt.Sprintf("[node(P) || P <- pg:get_members(%s)].", group))
	out := map[actor.Atom]int{}
	body := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if body == "" {
		return out
	}
	for _, a := range strings.Split(body, ",") {
		out[actor.Atom(strings.Trim(a, "'"))]++
	}
	return out
}

func (e *erlSide) connect(t *testing.T, to actor.Atom) {
	if v := e.e.Eval("net_adm:ping('" + string(to) + "')."); v != "pong" {
		t.Fatalf("net_adm:ping: %s", v)
	}
}

func (e *erlSide) halt(t *testing.T) {
	e.e.EvalTimeout("erlang:halt().", 10*time.Second) // no value comes back: the node is gone
	select {
	case <-e.e.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not halt", e.e.Name)
	}
}

// step is one move of the scenario and the views it settles to: for each
// group, members by role ("A" or "B").
type step struct {
	what   string
	do     func(t *testing.T, a, b side)
	settle map[string]map[string]int
	alive  string // the roles whose views count: "AB", or "A" once B halted
}

var pgGroups = []string{"g1", "g2"}

var pgScenario = []step{
	{"members joined before the connection", func(t *testing.T, a, b side) {
		a.join(t, "g1", "a1")
		b.join(t, "g1", "b1")
		b.join(t, "g2", "b1")
		a.connect(t, b.node())
	}, map[string]map[string]int{"g1": {"A": 1, "B": 1}, "g2": {"B": 1}}, "AB"},
	{"joins on both sides, one twice", func(t *testing.T, a, b side) {
		a.join(t, "g2", "a2")
		a.join(t, "g2", "a2")
		b.join(t, "g1", "b2")
	}, map[string]map[string]int{"g1": {"A": 1, "B": 2}, "g2": {"A": 2, "B": 1}}, "AB"},
	{"leaves on both sides", func(t *testing.T, a, b side) {
		a.leave(t, "g2", "a2")
		b.leave(t, "g2", "b1")
	}, map[string]map[string]int{"g1": {"A": 1, "B": 2}, "g2": {"A": 1}}, "AB"},
	{"a member dies on each side", func(t *testing.T, a, b side) {
		a.kill(t, "a2")
		b.kill(t, "b2")
	}, map[string]map[string]int{"g1": {"A": 1, "B": 1}, "g2": {}}, "AB"},
	{"B halts", func(t *testing.T, a, b side) {
		b.halt(t)
	}, map[string]map[string]int{"g1": {"A": 1}, "g2": {}}, "A"},
}

// runScenario runs pgScenario on a and b and returns its trace: the
// settled views after each step.
func runScenario(t *testing.T, a, b side) []string {
	roles := map[actor.Atom]string{a.node(): "A", b.node(): "B"}
	sides := map[string]side{"A": a, "B": b}
	var trace []string
	for _, st := range pgScenario {
		st.do(t, a, b)
		var last string
		deadline := time.Now().Add(15 * time.Second)
		for {
			var views []string
			ok := true
			for _, role := range st.alive {
				for _, g := range pgGroups {
					got := map[string]int{}
					for node, k := range sides[string(role)].view(t, g) {
						r := roles[node]
						if r == "" {
							r = "?" + string(node)
						}
						got[r] = k
					}
					views = append(views, fmt.Sprintf("%c sees %s: %s", role, g, fmtView(got)))
					if fmtView(got) != fmtView(st.settle[g]) {
						ok = false
					}
				}
			}
			last = strings.Join(views, "; ")
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("step %q did not settle: %s", st.what, last)
			}
			time.Sleep(5 * time.Millisecond)
		}
		trace = append(trace, st.what+": "+last)
	}
	return trace
}

func fmtView(v map[string]int) string {
	var parts []string
	for r, k := range v {
		if k != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", r, k))
		}
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func TestErlangPg(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	var colonyTrace, colonyHaltTrace, erlangTrace []string
	t.Run("ColonyAndErlang", func(t *testing.T) {
		n := startNode(t, port, "")
		ck := "pgcookie"
		b := newErlSide(t, port, ck)
		colonyTrace = runScenario(t, &colonySide{n: n, members: map[string]actor.Pid{}}, b)
		noScopeReports(t, n)
	})
	t.Run("ErlangAndColony", func(t *testing.T) { // the Colony node halts
		a := newErlSide(t, port, "pgcookie")
		n := startNode(t, port, "")
		colonyHaltTrace = runScenario(t, a, &colonySide{n: n, members: map[string]actor.Pid{}})
		noScopeReports(t, n)
	})
	t.Run("ErlangAndErlang", func(t *testing.T) {
		a := newErlSide(t, port, "pgcookie")
		b := newErlSide(t, port, "pgcookie")
		erlangTrace = runScenario(t, a, b)
	})
	if t.Failed() {
		return
	}
	want := strings.Join(erlangTrace, "\n")
	for name, tr := range map[string][]string{"Colony and Erlang": colonyTrace, "Erlang and Colony": colonyHaltTrace} {
		if got := strings.Join(tr, "\n"); got != want {
			t.Errorf("traces differ:\n%s:\n%s\nErlang and Erlang:\n%s", name, got, want)
		}
	}
	t.Logf("trace:\n%s", strings.Join(colonyTrace, "\n"))
}

// noScopeReports checks that the scope found nothing to complain of in
// what the Erlang node sent.
func noScopeReports(t *testing.T, n *node) {
	for _, r := range n.reports.all() {
		if strings.HasPrefix(r, "pg ") {
			t.Errorf("scope report: %s", r)
		}
	}
}

// A scope that dies while its node stays up: each side drops the other's
// members when the peer scope's monitor fires (Erlang's pg monitors the
// Colony scope, MONITOR_P; the Colony scope monitors Erlang's), and a new
// scope's members are seen again once it discovers its peers.
func TestErlangScopeDeath(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	n := startNode(t, port, "")
	e := erltest.Erl(t, port, disttest.UniqueName("erlpg"), "pgcookie")
	if v := e.Eval("{ok, _} = pg:start(pg), E1 = spawn(fun() -> receive stop -> ok end end), pg:join(g1, E1)."); v != "ok" {
		t.Fatalf("Erlang: %s", v)
	}
	c1 := spawnIdle(t, n.sys)
	if err := n.scope.Join(n.sys, actor.Atom("g1"), c1); err != nil {
		t.Fatal(err)
	}
	if err := n.Ping(disttest.Ctx(t, 10*time.Second), actor.Atom(e.Name)); err != nil {
		t.Fatal(err)
	}
	erlSees := func(k int) func() bool {
		return func() bool { return e.Eval("length(pg:get_members(g1)).") == fmt.Sprint(k) }
	}
	colonySees := func(k int) func() bool {
		return func() bool { return len(n.scope.Members(actor.Atom("g1"))) == k }
	}
	disttest.Eventually(t, 10*time.Second, "both to see both members", func() bool { return colonySees(2)() && erlSees(2)() })

	// Erlang's scope dies: Colony drops its member; a new one comes back.
	e.Eval("exit(whereis(pg), kill).")
	disttest.Eventually(t, 10*time.Second, "Colony to drop the dead Erlang scope's member", colonySees(1))
	if v := e.Eval("{ok, _} = pg:start(pg), pg:join(g1, E1)."); v != "ok" {
		t.Fatalf("Erlang: %s", v)
	}
	disttest.Eventually(t, 10*time.Second, "both to see both members again", func() bool { return colonySees(2)() && erlSees(2)() })

	// Colony's scope stops: Erlang drops its member; a new scope's is seen.
	n.scope.Stop()
	disttest.Eventually(t, 10*time.Second, "Erlang to drop the stopped Colony scope's member", erlSees(1))
	s2, err := pg.Start(n.Node)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Join(n.sys, actor.Atom("g1"), c1); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "both to see both members with the new scope", func() bool {
		return len(s2.Members(actor.Atom("g1"))) == 2 && erlSees(2)()
	})
	noScopeReports(t, n)
}

// Groups that are not atoms (a tuple, a binary, an integer, a list, a
// map) are the same groups on both sides: each side joins a member to
// each, and each side sees two members in each.
func TestErlangGroupTerms(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	port := erltest.EPMD(t)
	n := startNode(t, port, "")
	e := erltest.Erl(t, port, disttest.UniqueName("erlpg"), "pgcookie")
	const erlGroups = `[{shard, 1}, <<"bin">>, 42, [a, b], #{k => v}]`
	if v := e.Eval("{ok, _} = pg:start_link(), E1 = spawn(fun() -> receive stop -> ok end end), " +
		"[pg:join(G, E1) || G <- " + erlGroups + "]."); v != "[ok,ok,ok,ok,ok]" {
		t.Fatalf("Erlang: %s", v)
	}
	groups := []any{
		etf.Tuple{actor.Atom("shard"), 1}, "bin", 42, []any{actor.Atom("a"), actor.Atom("b")},
		map[any]any{actor.Atom("k"): actor.Atom("v")},
	}
	c1 := spawnIdle(t, n.sys)
	for _, g := range groups {
		if err := n.scope.Join(n.sys, g, c1); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Ping(disttest.Ctx(t, 10*time.Second), actor.Atom(e.Name)); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "Colony to see two members in each group", func() bool {
		for _, g := range groups {
			if len(n.scope.Members(g)) != 2 {
				return false
			}
		}
		return true
	})
	disttest.Eventually(t, 10*time.Second, "Erlang to see two members in each group", func() bool {
		return e.Eval("[length(pg:get_members(G)) || G <- "+erlGroups+"].") == "[2,2,2,2,2]"
	})
	if got := len(n.scope.WhichGroups()); got != len(groups) {
		t.Errorf("WhichGroups() has %d groups, want %d: %v", got, len(groups), n.scope.WhichGroups())
	}
	noScopeReports(t, n)
}

package pg_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/internal/disttest"
)

var (
	gWorkers = actor.Atom("workers")
	gOther   = actor.Atom("other")
)

// One node: joins counted per join, leaves once each, not_joined and
// nolocal, a death leaves every group, groups equal as terms are one.
func TestLocalJoinLeave(t *testing.T) {
	n := startNode(t, testEPMD(t), "")
	s, sys := n.scope, n.sys
	p1, p2 := spawnIdle(t, sys), spawnIdle(t, sys)

	if err := s.Join(sys, gWorkers, p1, p2, p1); err != nil {
		t.Fatal(err)
	}
	if err := s.Join(sys, gOther, p1); err != nil {
		t.Fatal(err)
	}
	if got := s.Members(gWorkers); len(got) != 3 || count(got, p1) != 2 || count(got, p2) != 1 {
		t.Fatalf("Members(workers) = %v", got)
	}
	if got := s.LocalMembers(gWorkers); len(got) != 3 {
		t.Errorf("LocalMembers(workers) = %v", got)
	}
	if got := s.WhichGroups(); len(got) != 2 || !slices.Contains(got, any(gWorkers)) || !slices.Contains(got, any(gOther)) {
		t.Errorf("WhichGroups() = %v", got)
	}
	if got := s.WhichLocalGroups(); len(got) != 2 {
		t.Errorf("WhichLocalGroups() = %v", got)
	}
	if got := s.Members("workers"); got != nil {
		t.Errorf(`the binary "workers" is another group than the atom: %v`, got)
	}

	// Leave takes one join away; a pid that never joined is not_joined.
	if err := s.Leave(sys, gWorkers, p1); err != nil {
		t.Fatal(err)
	}
	if got := s.Members(gWorkers); count(got, p1) != 1 {
		t.Errorf("after one leave: %v", got)
	}
	p3 := spawnIdle(t, sys)
	if err := s.Leave(sys, gWorkers, p3); !errors.Is(err, pg.ErrNotJoined) {
		t.Errorf("Leave of a pid not joined = %v, want ErrNotJoined", err)
	}
	if err := s.Leave(sys, actor.Atom("nogroup"), p1); !errors.Is(err, pg.ErrNotJoined) {
		t.Errorf("Leave of a group not joined = %v, want ErrNotJoined", err)
	}

	// Only local pids join.
	remote, err := actor.RemotePid(actor.RemoteID{Node: "other@127.0.0.1", Creation: 1, ID: 1, Serial: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []actor.Pid{remote, {}} {
		if err := s.Join(sys, gWorkers, bad); !errors.Is(err, pg.ErrNotLocal) {
			t.Errorf("Join of %v = %v, want ErrNotLocal", bad, err)
		}
	}
	if err := s.Join(sys, gWorkers); !errors.Is(err, pg.ErrNotLocal) {
		t.Errorf("Join of no pid = %v", err)
	}
	if err := s.Join(sys, func() {}, p1); !errors.Is(err, pg.ErrBadGroup) {
		t.Errorf("Join of a func group = %v, want ErrBadGroup", err)
	}

	// A death leaves every group, each join of it.
	sys.Exit(p1, actor.Kill)
	disttest.Eventually(t, 5*time.Second, "p1's death to leave its groups", func() bool {
		return count(s.Members(gWorkers), p1) == 0 && s.Members(gOther) == nil
	})
	if got := s.WhichGroups(); len(got) != 1 || got[0] != gWorkers {
		t.Errorf("WhichGroups() = %v, want [workers]: an empty group does not exist", got)
	}

	// A dead pid joins and leaves at once (its monitor fires noproc).
	disttest.Eventually(t, 5*time.Second, "p1 dead", func() bool { return !sys.Alive(p1) })
	if err := s.Join(sys, gOther, p1); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 5*time.Second, "the dead pid to leave", func() bool { return s.Members(gOther) == nil })

	// Terms equal as terms are one group: int and int64, string and []byte.
	if err := s.Join(sys, etf.Tuple{actor.Atom("g"), 1, "x"}, p2); err != nil {
		t.Fatal(err)
	}
	if got := s.Members(etf.Tuple{actor.Atom("g"), int64(1), []byte("x")}); len(got) != 1 || got[0] != p2 {
		t.Errorf("Members of an equal term = %v", got)
	}
}

// joiner joins itself from its handler (the Context is the Caller) and
// reports the result.
type joiner struct {
	s   *pg.Scope
	out chan error
}

func (j *joiner) Receive(c *actor.Context, m any) {
	switch m {
	case "join":
		j.out <- j.s.Join(c, gWorkers, c.Self())
	case "leave":
		j.out <- j.s.Leave(c, gWorkers, c.Self())
	}
}

func TestJoinFromHandler(t *testing.T) {
	n := startNode(t, testEPMD(t), "")
	out := make(chan error, 2)
	pid, err := n.sys.Spawn(&joiner{n.scope, out})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"join", "leave"} {
		n.sys.Send(pid, step)
		select {
		case err := <-out:
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer", step)
		}
		if want := step == "join"; (count(n.scope.Members(gWorkers), pid) == 1) != want {
			t.Errorf("after %s: Members = %v", step, n.scope.Members(gWorkers))
		}
	}
}

// Two Colony nodes: members joined before and after the connection are
// seen on both; a leave and a death are seen on the other; a node that
// stops loses its members on the other, and its next incarnation's are
// seen again.
func TestTwoNodes(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, "")
	b := startNode(t, port, "")
	early := spawnIdle(t, a.sys)
	if err := a.scope.Join(a.sys, gWorkers, early); err != nil {
		t.Fatal(err)
	}
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "b to see a's member joined before the connection", func() bool {
		return len(b.scope.Members(gWorkers)) == 1
	})
	if got := b.scope.LocalMembers(gWorkers); got != nil {
		t.Errorf("b's LocalMembers = %v, want none", got)
	}

	pa, pb := spawnIdle(t, a.sys), spawnIdle(t, b.sys)
	if err := a.scope.Join(a.sys, gOther, pa, pa); err != nil {
		t.Fatal(err)
	}
	if err := b.scope.Join(b.sys, gWorkers, pb); err != nil {
		t.Fatal(err)
	}
	want := map[actor.Atom]int{a.Name(): 1, b.Name(): 1}
	disttest.Eventually(t, 10*time.Second, "both to see both nodes' workers", func() bool {
		return mapsEqual(byNode(a.scope.Members(gWorkers), a.Name()), want) &&
			mapsEqual(byNode(b.scope.Members(gWorkers), b.Name()), want) &&
			len(b.scope.Members(gOther)) == 2
	})

	// A leave and a death, seen on the other node.
	if err := a.scope.Leave(a.sys, gOther, pa); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "b to see one leave", func() bool { return len(b.scope.Members(gOther)) == 1 })
	a.sys.Exit(pa, actor.Kill)
	b.sys.Exit(pb, actor.Kill)
	disttest.Eventually(t, 10*time.Second, "each to see the other's member die", func() bool {
		return b.scope.Members(gOther) == nil &&
			mapsEqual(byNode(a.scope.Members(gWorkers), a.Name()), map[actor.Atom]int{a.Name(): 1}) &&
			mapsEqual(byNode(b.scope.Members(gWorkers), b.Name()), map[actor.Atom]int{a.Name(): 1})
	})

	// b joins again and stops: a drops b's members; b's next incarnation
	// (same name) is discovered and its members seen.
	pb2 := spawnIdle(t, b.sys)
	b.scope.Join(b.sys, gWorkers, pb2)
	disttest.Eventually(t, 10*time.Second, "a to see pb2", func() bool { return len(a.scope.Members(gWorkers)) == 2 })
	if err := b.Stop(disttest.Ctx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "a to drop the stopped node's members", func() bool {
		return len(a.scope.Members(gWorkers)) == 1
	})
	b2 := startNode(t, port, string(b.Name()))
	pb3 := spawnIdle(t, b2.sys)
	b2.scope.Join(b2.sys, gWorkers, pb3)
	if err := b2.Connect(disttest.Ctx(t, 10*time.Second), a.Name()); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "both to see both again", func() bool {
		return mapsEqual(byNode(a.scope.Members(gWorkers), a.Name()), want) &&
			mapsEqual(byNode(b2.scope.Members(gWorkers), b2.Name()), want)
	})
}

// A scope that restarts while its node stays up: the peers drop the old
// scope's members when the new one discovers them.
func TestScopeRestart(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, "")
	b := startNode(t, port, "")
	pb := spawnIdle(t, b.sys)
	b.scope.Join(b.sys, gWorkers, pb)
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "a to see pb", func() bool { return len(a.scope.Members(gWorkers)) == 1 })
	b.scope.Stop()
	disttest.Eventually(t, 10*time.Second, "b's stopped scope to list no member", func() bool {
		return !b.sys.Alive(b.scope.Pid()) && b.scope.Members(gWorkers) == nil
	})
	s2, err := pg.Start(b.Node)
	if err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "a to drop the old scope's member", func() bool { return a.scope.Members(gWorkers) == nil })
	pb2 := spawnIdle(t, b.sys)
	s2.Join(b.sys, gWorkers, pb2)
	disttest.Eventually(t, 10*time.Second, "a to see the new scope's member", func() bool {
		got := a.scope.Members(gWorkers)
		return len(got) == 1 && got[0] == pb2Remote(t, pb2, b)
	})
}

// pb2Remote is how a pid of node b looks on another node.
func pb2Remote(t *testing.T, p actor.Pid, b *node) actor.Pid {
	id, serial, ok := b.sys.LocalParts(p)
	if !ok {
		t.Fatalf("%v is not b's", p)
	}
	r, err := actor.RemotePid(actor.RemoteID{Node: b.Name(), Creation: b.Creation(), ID: id, Serial: serial})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Scopes of different names are independent overlays.
func TestScopesIndependent(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, "", pg.Name("one"))
	b := startNode(t, port, "", pg.Name("two"))
	bOne, err := pg.Start(b.Node, pg.Name("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Start(b.Node, pg.Name("one")); !errors.Is(err, actor.ErrNameTaken) {
		t.Errorf("a second scope of a name = %v, want ErrNameTaken", err)
	}
	pb := spawnIdle(t, b.sys)
	b.scope.Join(b.sys, gWorkers, pb) // scope two: a runs none
	bOne.Join(b.sys, gOther, pb)
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "a's scope one to see b's", func() bool { return len(a.scope.Members(gOther)) == 1 })
	if got := a.scope.Members(gWorkers); got != nil {
		t.Errorf("scope one sees scope two's group: %v", got)
	}
}

// Malformed peer messages are ignored and reported once each; the scope
// keeps working.
func TestBadPeerMessages(t *testing.T) {
	n := startNode(t, testEPMD(t), "")
	remote, _ := actor.RemotePid(actor.RemoteID{Node: "stranger@127.0.0.1", Creation: 1, ID: 1, Serial: 1})
	for _, m := range []any{
		"hello", etf.Tuple{}, etf.Tuple{actor.Atom("discover"), 1},
		etf.Tuple{actor.Atom("join"), remote, gWorkers, 7},
		etf.Tuple{actor.Atom("join"), remote, gWorkers, []any{remote}}, // a peer not known: ignored silently
		etf.Tuple{actor.Atom("leave"), remote, []any{remote}, gWorkers},
		etf.Tuple{actor.Atom("$gen_cast"), etf.Tuple{actor.Atom("sync"), remote, 3}},
		etf.Tuple{actor.Atom("$gen_cast"), etf.Tuple{actor.Atom("sync"), remote, []any{etf.Tuple{gWorkers, remote}}}},
		etf.Tuple{actor.Atom("$gen_cast"), "x"},
	} {
		n.sys.Send(n.scope.Pid(), m)
	}
	p := spawnIdle(t, n.sys)
	if err := n.scope.Join(n.sys, gWorkers, p); err != nil {
		t.Fatal(err)
	}
	if got := n.scope.Members(gWorkers); len(got) != 1 {
		t.Errorf("Members = %v", got)
	}
	text := strings.Join(n.reports.all(), "\n")
	for _, want := range []string{"no pg message", "no remote pid", "no pids", "no list", "no sync"} {
		if !strings.Contains(text, want) {
			t.Errorf("no report of %q in:\n%s", want, text)
		}
	}
}

func mapsEqual(a, b map[actor.Atom]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A partition (the connection closed) drops each side's members on the
// other; when it heals, the scopes discover each other again and the sync
// restores the views, with what was joined meanwhile.
func TestPartitionHeals(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, "")
	b := startNode(t, port, "")
	pa, pb := spawnIdle(t, a.sys), spawnIdle(t, b.sys)
	a.scope.Join(a.sys, gWorkers, pa)
	b.scope.Join(b.sys, gWorkers, pb)
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	both := func(k int) func() bool {
		return func() bool { return len(a.scope.Members(gWorkers)) == k && len(b.scope.Members(gWorkers)) == k }
	}
	disttest.Eventually(t, 10*time.Second, "both to see both members", both(2))
	a.Disconnect(b.Name())
	disttest.Eventually(t, 10*time.Second, "each to drop the other's member", both(1))
	b.scope.Join(b.sys, gOther, pb) // during the partition
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	disttest.Eventually(t, 10*time.Second, "the views restored", func() bool {
		return both(2)() && len(a.scope.Members(gOther)) == 1
	})
}

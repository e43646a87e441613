package pg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/internal/disttest"
)

// subWatch subscribes to a scope and rebuilds what it watches from the
// snapshots and the Changes; tests run funcs in its handler (a Request
// carrying a func).
type subWatch struct {
	views   map[actor.Ref]map[string]map[actor.Pid]int // by subscription, by group (%v), members counted
	changes map[actor.Ref]int
	bad     []string
}

func (w *subWatch) Receive(c *actor.Context, m any) {
	switch v := m.(type) {
	case actor.Request:
		c.Reply(v, v.Msg.(func(*actor.Context) any)(c))
	case pg.Change:
		w.changes[v.Ref]++
		view := w.views[v.Ref]
		if view == nil {
			w.bad = append(w.bad, fmt.Sprintf("a Change of an unknown subscription: %+v", v))
			return
		}
		g := fmt.Sprint(v.Group)
		if view[g] == nil {
			view[g] = map[actor.Pid]int{}
		}
		for _, p := range v.Pids {
			if v.Joined {
				view[g][p]++
			} else if view[g][p] == 0 {
				w.bad = append(w.bad, fmt.Sprintf("a leave of %v from %s, not in the view", p, g))
			} else {
				view[g][p]--
			}
		}
	}
}

func (w *subWatch) add(ref actor.Ref, groups ...pg.Members) {
	view := map[string]map[actor.Pid]int{}
	for _, g := range groups {
		m := map[actor.Pid]int{}
		for _, p := range g.Pids {
			m[p]++
		}
		view[fmt.Sprint(g.Group)] = m
	}
	w.views[ref] = view
}

// in runs f in the watcher's handler.
func in[T any](t *testing.T, sys *actor.System, pid actor.Pid, f func(c *actor.Context) T) T {
	t.Helper()
	v, err := sys.Call(pid, func(c *actor.Context) any { return f(c) }, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return v.(T)
}

// A group's subscriber and a scope's subscriber on one node rebuild, from
// their snapshots and Changes, what Members says, through joins and leaves
// on both nodes, a member's death and the other node's stop; Demonitor
// ends a subscription and flushes its Changes.
func TestMonitor(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, "")
	b := startNode(t, port, "")
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	w := &subWatch{views: map[actor.Ref]map[string]map[actor.Pid]int{}, changes: map[actor.Ref]int{}}
	wpid, err := a.sys.Spawn(w)
	if err != nil {
		t.Fatal(err)
	}
	pa := spawnIdle(t, a.sys)
	a.scope.Join(a.sys, gWorkers, pa) // before the subscriptions: in their snapshots
	type refs struct{ group, scope actor.Ref }
	r := in(t, a.sys, wpid, func(c *actor.Context) refs {
		gref, pids, err := a.scope.Monitor(c, gWorkers)
		if err != nil {
			t.Error(err)
		}
		w.add(gref, pg.Members{Group: gWorkers, Pids: pids})
		sref, groups, err := a.scope.MonitorScope(c)
		if err != nil {
			t.Error(err)
		}
		w.add(sref, groups...)
		return refs{gref, sref}
	})
	// same says whether the watcher's view of group by ref is Members'.
	same := func(ref actor.Ref, group actor.Atom) func() bool {
		return func() bool {
			return in(t, a.sys, wpid, func(*actor.Context) bool {
				want := map[actor.Pid]int{}
				for _, p := range a.scope.Members(group) {
					want[p]++
				}
				got := w.views[ref][fmt.Sprint(group)]
				for p, k := range got {
					if k != want[p] {
						return false
					}
				}
				for p, k := range want {
					if got[p] != k {
						return false
					}
				}
				return true
			})
		}
	}
	steps := []struct {
		what string
		do   func()
	}{
		{"local joins", func() { a.scope.Join(a.sys, gWorkers, pa, pa) }},
		{"a remote join", func() { b.scope.Join(b.sys, gWorkers, spawnIdle(t, b.sys)) }},
		{"a local leave", func() { a.scope.Leave(a.sys, gWorkers, pa) }},
		{"a join to another group", func() { a.scope.Join(a.sys, gOther, pa) }},
		{"a local death", func() { a.sys.Exit(pa, actor.Kill) }},
		{"the other node's stop", func() { b.Stop(disttest.Ctx(t, 10*time.Second)) }},
	}
	for _, st := range steps {
		st.do()
		disttest.Eventually(t, 10*time.Second, st.what+": the group subscriber's view", same(r.group, gWorkers))
		disttest.Eventually(t, 10*time.Second, st.what+": the scope subscriber's view", func() bool {
			return same(r.scope, gWorkers)() && same(r.scope, gOther)()
		})
	}
	if got := in(t, a.sys, wpid, func(*actor.Context) int { return len(w.views[r.group][fmt.Sprint(gOther)]) }); got != 0 {
		t.Errorf("the group subscriber got Changes of another group")
	}

	// Demonitor: no more Changes for it; an unknown ref is false.
	p2 := spawnIdle(t, a.sys)
	a.scope.Join(a.sys, gWorkers, p2) // its Change may be in the mailbox: Demonitor flushes it
	type result struct {
		ok, again bool
		n         int
	}
	res := in(t, a.sys, wpid, func(c *actor.Context) result {
		n := w.changes[r.group]
		ok := a.scope.Demonitor(c, r.group)
		again := a.scope.Demonitor(c, r.group)
		return result{ok, again, n}
	})
	if !res.ok || res.again {
		t.Errorf("Demonitor = %v, then %v; want true, then false", res.ok, res.again)
	}
	a.scope.Join(a.sys, gWorkers, p2)
	disttest.Eventually(t, 10*time.Second, "the scope subscriber to see the last join", same(r.scope, gWorkers))
	if n := in(t, a.sys, wpid, func(*actor.Context) int { return w.changes[r.group] }); n != res.n {
		t.Errorf("%d Changes for the ended subscription, %d before Demonitor", n, res.n)
	}
	if bad := in(t, a.sys, wpid, func(*actor.Context) []string { return w.bad }); len(bad) > 0 {
		t.Errorf("the watcher's rebuild broke: %v", bad)
	}
}

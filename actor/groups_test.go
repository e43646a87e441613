package actor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"pgregory.net/rapid"
)

// gWatch is an actor that monitors groups: for each of its monitors it
// rebuilds the group, as a multiset, from MonitorGroup's snapshot and the
// GroupChanges it receives, and it runs the functions it is called with
// (actor.Request carrying a func), so tests read its state in its handler.
type gWatch struct {
	views   map[actor.Ref]*gView
	changes []actor.GroupChange // every GroupChange received, in order
	bad     []string            // what broke the rebuild: a leave of a pid not held, an unknown ref
}

type gView struct {
	group string
	n     map[actor.Pid]int
}

func newGWatch() *gWatch { return &gWatch{views: map[actor.Ref]*gView{}} }

func (w *gWatch) Receive(c *actor.Context, m any) {
	switch v := m.(type) {
	case actor.Request:
		c.Reply(v, v.Msg.(func(*actor.Context) any)(c))
	case actor.GroupChange:
		w.apply(v)
	}
}

func (w *gWatch) apply(v actor.GroupChange) {
	w.changes = append(w.changes, v)
	view := w.views[v.Ref]
	if view == nil {
		w.bad = append(w.bad, fmt.Sprintf("change of an unknown monitor: %+v", v))
		return
	}
	if v.Group != view.group {
		w.bad = append(w.bad, fmt.Sprintf("change of group %q to a monitor of %q", v.Group, view.group))
	}
	for _, p := range v.Pids {
		if v.Joined {
			view.n[p]++
			continue
		}
		if view.n[p] == 0 {
			w.bad = append(w.bad, fmt.Sprintf("leave of %v from %q, which the view did not hold", p, v.Group))
			continue
		}
		if view.n[p]--; view.n[p] == 0 {
			delete(view.n, p)
		}
	}
}

// monitor runs MonitorGroup in the watcher and starts a view from its snapshot.
func (w *gWatch) monitor(c *actor.Context, group string) (actor.Ref, []actor.Pid) {
	ref, snap, err := c.MonitorGroup(group)
	if err != nil {
		panic(err)
	}
	w.views[ref] = &gView{group: group, n: multiset(snap)}
	return ref, snap
}

// multisetOf copies a multiset.
func multisetOf(n map[actor.Pid]int) map[actor.Pid]int {
	c := make(map[actor.Pid]int, len(n))
	for p, k := range n {
		c[p] = k
	}
	return c
}

func sameCounts(a, b map[actor.Pid]int) bool {
	if len(a) != len(b) {
		return false
	}
	for p, k := range a {
		if b[p] != k {
			return false
		}
	}
	return true
}

func multiset(ps []actor.Pid) map[actor.Pid]int {
	n := map[actor.Pid]int{}
	for _, p := range ps {
		n[p]++
	}
	return n
}

// fataler is what in needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// in runs f in actor pid (a gWatch) and returns its result.
func in[T any](t fataler, sys *actor.System, pid actor.Pid, f func(c *actor.Context) T) T {
	t.Helper()
	v, err := sys.Call(pid, func(c *actor.Context) any { return f(c) }, 10*time.Second)
	if err != nil {
		t.Fatalf("call into %v: %v", pid, err)
	}
	r, _ := v.(T)
	return r
}

// spawnWatch spawns a gWatch.
func spawnWatch(t testing.TB, sys *actor.System, opts ...actor.SpawnOption) (actor.Pid, *gWatch) {
	t.Helper()
	w := newGWatch()
	return mustSpawn(t, sys, w, opts...), w
}

// takeChanges returns, and forgets, the GroupChanges w has received; a call
// into the watcher is a round trip, so every change sent before it began has
// been handled.
func takeChanges(t testing.TB, sys *actor.System, pid actor.Pid, w *gWatch) []actor.GroupChange {
	t.Helper()
	return in(t, sys, pid, func(*actor.Context) []actor.GroupChange {
		cs := w.changes
		w.changes = nil
		return cs
	})
}

func checkChanges(t *testing.T, got []actor.GroupChange, want ...actor.GroupChange) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Ref != w.Ref || g.Group != w.Group || g.Joined != w.Joined || !slices.Equal(g.Pids, w.Pids) {
			t.Fatalf("change %d: %+v, want %+v (all: %+v)", i, g, w, got)
		}
	}
}

func joined(ref actor.Ref, group string, p actor.Pid) actor.GroupChange {
	return actor.GroupChange{Ref: ref, Group: group, Joined: true, Pids: []actor.Pid{p}}
}

func left(ref actor.Ref, group string, p actor.Pid) actor.GroupChange {
	return actor.GroupChange{Ref: ref, Group: group, Pids: []actor.Pid{p}}
}

func mustJoin(t testing.TB, sys *actor.System, group string, p actor.Pid) {
	t.Helper()
	if err := sys.JoinGroup(group, p); err != nil {
		t.Fatalf("JoinGroup(%q, %v): %v", group, p, err)
	}
}

// join is mustJoin for a handler or a goroutine of the test: it panics (the
// handler's actor dies and the test's call into it fails).
func join(sys *actor.System, group string, p actor.Pid) {
	if err := sys.JoinGroup(group, p); err != nil {
		panic(fmt.Sprintf("JoinGroup(%q, %v): %v", group, p, err))
	}
}

func idleActor(t testing.TB, sys *actor.System) actor.Pid {
	t.Helper()
	return mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
}

// TestWhichGroups: WhichGroups lists, sorted, the groups with members: a
// group exists from its first join until its last member leaves or dies, and
// a monitored group with no members is not listed.
func TestWhichGroups(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	check := func(want ...string) {
		t.Helper()
		if got := sys.WhichGroups(); !slices.Equal(got, want) {
			t.Fatalf("WhichGroups() = %q, want %q", got, want)
		}
	}
	check()
	a, b := idleActor(t, sys), idleActor(t, sys)
	mustJoin(t, sys, "zeta", a)
	mustJoin(t, sys, "alpha", a)
	mustJoin(t, sys, "mid", b)
	mustJoin(t, sys, "alpha", b)
	check("alpha", "mid", "zeta")
	if err := sys.LeaveGroup("mid", b); err != nil {
		t.Fatal(err)
	}
	check("alpha", "zeta")
	w, _ := spawnWatch(t, sys)
	in(t, sys, w, func(c *actor.Context) error { _, _, err := c.MonitorGroup("watched"); return err })
	check("alpha", "zeta")
	sys.Exit(a, actor.Kill) // the finaliser has run when Exit returns
	check("alpha")
	sys.Exit(b, actor.Kill)
	check()
}

// TestMonitorGroupSnapshotThenChanges: MonitorGroup returns the members in
// join order, one entry per join, and then the watcher gets one GroupChange
// per join and per successful leave of that group, in order, made by anyone;
// a leave that fails (not joined) and changes to other groups tell it
// nothing.
func TestMonitorGroupSnapshotThenChanges(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	a, b, c := idleActor(t, sys), idleActor(t, sys), idleActor(t, sys)
	mustJoin(t, sys, "g", a)
	mustJoin(t, sys, "g", b)
	mustJoin(t, sys, "g", a)
	wp, w := spawnWatch(t, sys)
	var ref actor.Ref
	snap := in(t, sys, wp, func(cx *actor.Context) []actor.Pid {
		var s []actor.Pid
		ref, s = w.monitor(cx, "g")
		return s
	})
	if !slices.Equal(snap, []actor.Pid{a, b, a}) {
		t.Fatalf("snapshot %v, want [a b a] = %v", snap, []actor.Pid{a, b, a})
	}
	mustJoin(t, sys, "g", c)
	mustJoin(t, sys, "h", c)
	if err := sys.LeaveGroup("g", a); err != nil {
		t.Fatal(err)
	}
	if err := sys.LeaveGroup("g", idleActor(t, sys)); err == nil {
		t.Fatal("LeaveGroup of a non-member succeeded")
	}
	// A member that makes itself leave, from its own handler.
	in(t, sys, wp, func(cx *actor.Context) error { return cx.System().JoinGroup("g", cx.Self()) })
	in(t, sys, wp, func(cx *actor.Context) error { return cx.System().LeaveGroup("g", cx.Self()) })
	checkChanges(t, takeChanges(t, sys, wp, w),
		joined(ref, "g", c), left(ref, "g", a), joined(ref, "g", wp), left(ref, "g", wp))
	if bad := in(t, sys, wp, func(*actor.Context) []string { return w.bad }); len(bad) != 0 {
		t.Fatalf("rebuild broke: %q", bad)
	}

	// A group nobody joined: an empty snapshot, and it need not exist.
	empty := in(t, sys, wp, func(cx *actor.Context) []actor.Pid { _, s := w.monitor(cx, "nobody"); return s })
	if len(empty) != 0 {
		t.Fatalf("snapshot of an empty group: %v", empty)
	}
}

// TestMonitorGroupMemberDeathOneLeavePerJoin: a member's death tells each
// monitor of a group one leave per join the member had there (pg's DOWN
// handling: leave_local_update_ets once per entry), whatever the exit
// reason, and tells monitors of its other groups theirs.
func TestMonitorGroupMemberDeathOneLeavePerJoin(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	a, b := idleActor(t, sys), idleActor(t, sys)
	mustJoin(t, sys, "g", a)
	mustJoin(t, sys, "g", b)
	mustJoin(t, sys, "g", a)
	mustJoin(t, sys, "h", a)
	wp, w := spawnWatch(t, sys)
	var rg, rh actor.Ref
	in(t, sys, wp, func(c *actor.Context) any { rg, _ = w.monitor(c, "g"); rh, _ = w.monitor(c, "h"); return nil })
	sys.Exit(a, actor.Atom("boom"))
	got := takeChanges(t, sys, wp, w)
	// g's two leaves and h's one; across groups the order is not defined.
	var g, h []actor.GroupChange
	for _, c := range got {
		if c.Ref == rg {
			g = append(g, c)
		} else {
			h = append(h, c)
		}
	}
	checkChanges(t, g, left(rg, "g", a), left(rg, "g", a))
	checkChanges(t, h, left(rh, "h", a))

	// A member that stops by itself (reason normal) leaves too.
	stopper := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
	mustJoin(t, sys, "g", stopper)
	sys.Send(stopper, "stop")
	eventually(t, 5*time.Second, "the stopper's leave", func() bool {
		return len(in(t, sys, wp, func(*actor.Context) []actor.GroupChange { return w.changes })) == 2
	})
	checkChanges(t, takeChanges(t, sys, wp, w), joined(rg, "g", stopper), left(rg, "g", stopper))
	if got := sys.GroupMembers("g"); !slices.Equal(got, []actor.Pid{b}) {
		t.Fatalf("members %v, want [%v]", got, b)
	}
}

// TestDemonitorGroup: DemonitorGroup of a monitor in force returns true and
// ends it: changes already in the mailbox, whether still queued or skipped
// by a selective receive, never reach the handler (pg:demonitor/1 flushes
// them), and none come later. A second DemonitorGroup, one of a process
// monitor's ref, and one of another actor's group monitor return false and
// change nothing. A GroupChange an actor builds with the stopped ref is an
// ordinary message.
func TestDemonitorGroup(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	a, b := idleActor(t, sys), idleActor(t, sys)
	wp, w := spawnWatch(t, sys)
	other, ow := spawnWatch(t, sys)
	oref := in(t, sys, other, func(c *actor.Context) actor.Ref { r, _ := ow.monitor(c, "g"); return r })

	type result struct {
		first, again, procRef, othersRef bool
		skipped                          any
	}
	var keep, stopped actor.Ref
	r := in(t, sys, wp, func(c *actor.Context) result {
		ref, _ := w.monitor(c, "g")
		stopped = ref
		keep, _ = w.monitor(c, "g") // a second monitor of the same group, kept
		// Changes delivered while this handler runs wait in the mailbox.
		join(sys, "g", a)
		join(sys, "g", b)
		// A selective receive that matches nothing moves them to the save
		// queue.
		skipped, _ := c.Receive(func(m any) bool { _, ok := m.(string); return ok }, 0)
		join(sys, "g", a) // one more, still in the mailbox
		var res result
		res.skipped = skipped
		res.first = c.DemonitorGroup(ref)
		// A GroupChange built by an actor is an ordinary message, even
		// with the stopped monitor's ref.
		c.Send(c.Self(), joined(ref, "g", a))
		join(sys, "g", b) // after DemonitorGroup: only keep and other are told
		res.again = c.DemonitorGroup(ref)
		mref, _ := c.Monitor(a)
		res.procRef = c.DemonitorGroup(mref)
		res.othersRef = c.DemonitorGroup(oref)
		c.Demonitor(mref, true)
		return res
	})
	if !r.first || r.again || r.procRef || r.othersRef {
		t.Fatalf("DemonitorGroup results %+v, want true, then false for the rest", r)
	}
	if r.skipped != nil {
		t.Fatalf("the selective receive took %v", r.skipped)
	}
	checkChanges(t, takeChanges(t, sys, wp, w),
		joined(keep, "g", a), joined(keep, "g", b), joined(keep, "g", a), joined(stopped, "g", a), joined(keep, "g", b))
	checkChanges(t, takeChanges(t, sys, other, ow),
		joined(oref, "g", a), joined(oref, "g", b), joined(oref, "g", a), joined(oref, "g", b))
	if bad := in(t, sys, wp, func(*actor.Context) []string { return w.bad }); len(bad) != 0 {
		t.Fatalf("the stopped monitor's changes reached the handler: %q", bad)
	}
}

// TestGroupMonitorEndsWithWatcher: a watcher's death ends its group monitors
// (none is left in the System, and later joins are sent to no one), and a
// handler whose actor was killed cannot start one (ErrNoProc, nothing left).
func TestGroupMonitorEndsWithWatcher(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	wp, w := spawnWatch(t, sys)
	in(t, sys, wp, func(c *actor.Context) any {
		w.monitor(c, "g")
		w.monitor(c, "g")
		w.monitor(c, "h")
		return nil
	})
	if n := sys.GroupMonitors(); n != 3 {
		t.Fatalf("%d group monitors, want 3", n)
	}
	sys.Exit(wp, actor.Kill)
	if n := sys.GroupMonitors(); n != 0 {
		t.Fatalf("%d group monitors after the watcher's death, want 0", n)
	}
	dropped := sys.Stats().Dropped
	mustJoin(t, sys, "g", idleActor(t, sys))
	if d := sys.Stats().Dropped; d != dropped {
		t.Fatalf("a join after the watcher's death was sent to it (%d dropped)", d-dropped)
	}

	// An orphaned handler: killed while it runs, then it monitors.
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	orphan := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, _ any) {
		close(entered)
		<-release
		_, _, err := c.MonitorGroup("g")
		done <- err
	}))
	sys.Send(orphan, "go")
	recv(t, entered)
	sys.Exit(orphan, actor.Kill)
	close(release)
	if err := recv(t, done); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("MonitorGroup in a killed actor's handler: %v, want ErrNoProc", err)
	}
	if n := sys.GroupMonitors(); n != 0 {
		t.Fatalf("%d group monitors left by a killed actor", n)
	}
}

// TestGroupChangeIgnoresMailboxBound: GroupChanges are never refused by a
// MailboxBound, as Down and Exit are not: a monitor that lost one would
// hold a wrong member list.
func TestGroupChangeIgnoresMailboxBound(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	wp, w := spawnWatch(t, sys, actor.MailboxBound(1))
	ref := in(t, sys, wp, func(c *actor.Context) actor.Ref { r, _ := w.monitor(c, "g"); return r })
	// Keep the watcher's handler running (blocked outside the runtime), so
	// the message it took counts against the bound and the mailbox is full.
	entered, release := make(chan struct{}), make(chan struct{})
	go sys.Call(wp, func(*actor.Context) any { close(entered); <-release; return nil }, 10*time.Second)
	recv(t, entered)
	full := false
	for range 3 {
		if errors.Is(sys.Send(wp, "filler"), actor.ErrMailboxFull) {
			full = true
			break
		}
	}
	if !full {
		t.Fatal("the bounded mailbox never filled")
	}
	p := idleActor(t, sys)
	const n = 5
	for range n {
		mustJoin(t, sys, "g", p)
	}
	close(release)
	var want []actor.GroupChange
	for range n {
		want = append(want, joined(ref, "g", p))
	}
	// The changes are over the bound until the watcher has handled them, and
	// a call into it is refused till then.
	var got []actor.GroupChange
	eventually(t, 10*time.Second, "the watcher's mailbox to drain", func() bool {
		v, err := sys.Call(wp, func(*actor.Context) any { return slices.Clone(w.changes) }, 10*time.Second)
		got, _ = v.([]actor.GroupChange)
		return !errors.Is(err, actor.ErrMailboxFull)
	})
	checkChanges(t, got, want...)
}

// TestGroupChangesKeepOrderUnderRaces: one goroutine joins a pid while
// another retries LeaveGroup of it until that succeeds, so each leave is
// made right after its join, on another goroutine; many pids at once. A
// monitor must never see a leave of a pid before its join (its rebuilt view
// would go negative), and once all is done its view is GroupMembers. A
// second watcher monitors, and a third monitors and stops, while the churn
// runs: a snapshot taken mid-churn plus the changes after it must rebuild
// the same members.
func TestGroupChangesKeepOrderUnderRaces(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	const pairs, rounds = 4, 300
	w1p, w1 := spawnWatch(t, sys)
	w2p, w2 := spawnWatch(t, sys)
	w3p, w3 := spawnWatch(t, sys)
	in(t, sys, w1p, func(c *actor.Context) any { w1.monitor(c, "g"); return nil })
	members := make([]actor.Pid, pairs)
	for i := range members {
		members[i] = idleActor(t, sys)
	}
	var wg sync.WaitGroup
	for i := range pairs {
		p := members[i]
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := sys.JoinGroup("g", p); err != nil {
					t.Errorf("JoinGroup: %v", err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for left := 0; left < rounds-1; { // one join of each pid stays
				if sys.LeaveGroup("g", p) == nil {
					left++
				}
			}
		}()
	}
	in(t, sys, w2p, func(c *actor.Context) any { w2.monitor(c, "g"); return nil })
	in(t, sys, w3p, func(c *actor.Context) any {
		ref, _ := w3.monitor(c, "g")
		// Let changes queue up behind this handler (the churn may be over,
		// hence the bound); none of them may reach it: without its view, a
		// change of ref counts as bad.
		for i := 0; i < 10000; i++ {
			if info, _ := c.Info(); info.MailboxLen >= 3 {
				break
			}
			runtime.Gosched()
		}
		delete(w3.views, ref)
		if !c.DemonitorGroup(ref) {
			panic("DemonitorGroup of a monitor in force")
		}
		return nil
	})
	wg.Wait()
	want := multiset(sys.GroupMembers("g"))
	if len(want) != pairs {
		t.Fatalf("members %v, want each of the %d pids once", sys.GroupMembers("g"), pairs)
	}
	for i, w := range []struct {
		pid actor.Pid
		w   *gWatch
	}{{w1p, w1}, {w2p, w2}, {w3p, w3}} {
		type state struct {
			bad   []string
			views map[actor.Ref]map[actor.Pid]int
		}
		st := in(t, sys, w.pid, func(*actor.Context) state {
			s := state{bad: w.w.bad, views: map[actor.Ref]map[actor.Pid]int{}}
			for ref, v := range w.w.views {
				s.views[ref] = multisetOf(v.n)
			}
			return s
		})
		if len(st.bad) != 0 {
			t.Fatalf("watcher %d: %d bad changes, first %q", i+1, len(st.bad), st.bad[0])
		}
		for ref, v := range st.views {
			if !sameCounts(v, want) {
				t.Fatalf("watcher %d monitor %v rebuilt %v, members are %v", i+1, ref, v, want)
			}
		}
	}
}

// TestGroupMonitorModel: a rapid state machine of joins, leaves and deaths of
// members (a watcher may be a member too), monitors started and stopped, and
// watchers killed, against a model of each group's entries in join order.
// After every step, each monitor in force has rebuilt, from its snapshot and
// the GroupChanges it handled, exactly GroupMembers as a multiset (and
// GroupMembers is the model); no change of a stopped monitor reached a
// handler; WhichGroups is the model's groups, sorted; and the System holds
// exactly the monitors the model has in force (a dead watcher's are gone).
func TestGroupMonitorModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sys, err := actor.Start(actor.Config{Schedulers: 2, MaxActors: 64})
		if err != nil {
			rt.Fatal(err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := sys.Shutdown(ctx); err != nil {
				rt.Errorf("Shutdown: %v", err)
			}
		}()
		type watcher struct {
			pid  actor.Pid
			w    *gWatch
			refs map[actor.Ref]string // its monitors in force -> group
		}
		var (
			watchers [2]*watcher
			pids     []actor.Pid // every member candidate ever spawned, dead ones included
			model    = map[string][]actor.Pid{}
			groups   = rapid.SampledFrom([]string{"x", "y", "z"})
		)
		spawnWatcher := func(i int) {
			w := newGWatch()
			pid, err := sys.Spawn(w)
			if err != nil {
				rt.Fatal(err)
			}
			watchers[i] = &watcher{pid: pid, w: w, refs: map[actor.Ref]string{}}
			pids = append(pids, pid)
		}
		spawnWatcher(0)
		spawnWatcher(1)
		removeAll := func(p actor.Pid) {
			for g, l := range model {
				if l = slices.DeleteFunc(l, func(q actor.Pid) bool { return q == p }); len(l) == 0 {
					delete(model, g)
				} else {
					model[g] = l
				}
			}
		}
		pick := func(t *rapid.T) actor.Pid { return rapid.SampledFrom(pids).Draw(t, "pid") }

		rt.Repeat(map[string]func(*rapid.T){
			"spawn": func(t *rapid.T) {
				if len(pids) >= 12 {
					t.Skip("enough actors")
				}
				p, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, p)
			},
			"join": func(t *rapid.T) {
				g, p := groups.Draw(t, "group"), pick(t)
				err := sys.JoinGroup(g, p)
				if !sys.Alive(p) {
					if !errors.Is(err, actor.ErrNoProc) {
						t.Fatalf("JoinGroup of a dead pid: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("JoinGroup: %v", err)
				}
				model[g] = append(model[g], p)
			},
			"leave": func(t *rapid.T) {
				g, p := groups.Draw(t, "group"), pick(t)
				err := sys.LeaveGroup(g, p)
				l := model[g]
				j := len(l) - 1
				for j >= 0 && l[j] != p {
					j--
				}
				if j < 0 {
					if err == nil {
						t.Fatalf("LeaveGroup(%q) of a non-member succeeded", g)
					}
					return
				}
				if err != nil {
					t.Fatalf("LeaveGroup: %v", err)
				}
				if model[g] = slices.Delete(l, j, j+1); len(model[g]) == 0 {
					delete(model, g)
				}
			},
			"kill": func(t *rapid.T) {
				p := pick(t)
				for i, w := range watchers {
					if w.pid == p {
						defer spawnWatcher(i) // a fresh watcher takes its place
					}
				}
				reason := rapid.SampledFrom([]actor.Reason{actor.Kill, actor.Atom("boom")}).Draw(t, "reason")
				sys.Exit(p, reason) // the death is complete when Exit returns
				removeAll(p)
			},
			"monitor": func(t *rapid.T) {
				w := watchers[rapid.IntRange(0, 1).Draw(t, "watcher")]
				g := groups.Draw(t, "group")
				type res struct {
					ref  actor.Ref
					snap []actor.Pid
				}
				r := in(rt, sys, w.pid, func(c *actor.Context) res { ref, snap := w.w.monitor(c, g); return res{ref, snap} })
				if !slices.Equal(r.snap, model[g]) {
					t.Fatalf("MonitorGroup(%q) snapshot %v, want %v", g, r.snap, model[g])
				}
				w.refs[r.ref] = g
			},
			"demonitor": func(t *rapid.T) {
				w := watchers[rapid.IntRange(0, 1).Draw(t, "watcher")]
				var ref actor.Ref
				var all []actor.Ref
				for _, x := range watchers {
					for r := range x.refs {
						all = append(all, r)
					}
				}
				if len(all) > 0 {
					slices.Sort(all)
					ref = rapid.SampledFrom(all).Draw(t, "ref")
				}
				_, mine := w.refs[ref]
				got := in(rt, sys, w.pid, func(c *actor.Context) bool {
					ok := c.DemonitorGroup(ref)
					if ok {
						delete(w.w.views, ref) // a change of ref from now on counts as bad
					}
					return ok
				})
				if got != mine {
					t.Fatalf("DemonitorGroup = %v, want %v (the watcher's own monitor in force)", got, mine)
				}
				delete(w.refs, ref)
			},
			"": func(t *rapid.T) {
				for g, l := range model {
					if got := sys.GroupMembers(g); !slices.Equal(got, l) {
						t.Fatalf("GroupMembers(%q) = %v, want %v", g, got, l)
					}
				}
				var names []string
				for g := range model {
					names = append(names, g)
				}
				slices.Sort(names)
				if got := sys.WhichGroups(); !slices.Equal(got, names) {
					t.Fatalf("WhichGroups() = %q, want %q", got, names)
				}
				n := 0
				for _, w := range watchers {
					n += len(w.refs)
					type state struct {
						bad   []string
						views map[actor.Ref]*gView
					}
					st := in(rt, sys, w.pid, func(*actor.Context) state {
						s := state{bad: slices.Clone(w.w.bad), views: map[actor.Ref]*gView{}}
						for ref, v := range w.w.views {
							s.views[ref] = &gView{group: v.group, n: multisetOf(v.n)}
						}
						return s
					})
					if len(st.bad) != 0 {
						t.Fatalf("watcher %v: %q", w.pid, st.bad)
					}
					if len(st.views) != len(w.refs) {
						t.Fatalf("watcher %v has %d views for %d monitors", w.pid, len(st.views), len(w.refs))
					}
					for ref, v := range st.views {
						if want := multiset(model[v.group]); !sameCounts(v.n, want) {
							t.Fatalf("monitor %v of %q rebuilt %v, members %v", ref, v.group, v.n, model[v.group])
						}
					}
				}
				if got := sys.GroupMonitors(); got != n {
					t.Fatalf("%d group monitors in the System, %d in force", got, n)
				}
			},
		})
	})
}

// TestLeaveGroupBadPid: LeaveGroup of a malformed pid (the zero Pid, another
// System's) is ErrBadPid, as JoinGroup of one is; it used to report that the
// pid had not joined the group. A dead pid's leave is still not-joined (pg's
// not_joined): its death took its entries.
func TestLeaveGroupBadPid(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	other := start(t, actor.Config{Schedulers: 1})
	foreign := mustSpawn(t, other, actor.ActorFunc(func(*actor.Context, any) {}))
	for _, tc := range []struct {
		name string
		pid  actor.Pid
	}{{"zero pid", actor.Pid{}}, {"another System's pid", foreign}} {
		if err := sys.LeaveGroup("g", tc.pid); !errors.Is(err, actor.ErrBadPid) {
			t.Errorf("LeaveGroup of %s: %v, want ErrBadPid", tc.name, err)
		}
	}
	live := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	if err := sys.JoinGroup("g", live); err != nil {
		t.Fatal(err)
	}
	if err := sys.LeaveGroup("g", live); err != nil {
		t.Fatalf("LeaveGroup of a member: %v", err)
	}
	if err := sys.LeaveGroup("g", live); err == nil || errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("second LeaveGroup: %v, want not joined", err)
	}
	if err := sys.LeaveGroup("g", deadPid(t, sys)); err == nil || errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("LeaveGroup of a dead pid: %v, want not joined", err)
	}
}

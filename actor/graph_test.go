package actor_test

// Random graphs of links and monitors with random deaths, checked against a
// model of OTP's rules (rapid).
//
// Each case starts a System with n graph actors (some trapping exits) and an
// observer that monitors them all, then draws operations: Link, Unlink,
// Monitor, Demonitor, Register, Stop with a reason, exit signals from
// another actor, from the actor itself and from outside the System.
//
// Sequential phase. Operations run one at a time, each as a call into the
// acting actor, and the test waits after each until the live count says the
// deaths it caused are finalised. The model below (written from OTP's
// documentation, independently of monitor.Route) then predicts everything:
// the result of each call, who dies with which reason, every Exit message a
// trapping actor gets and every Down a watcher gets, names, link and monitor
// counts. The cascade of one death is order-independent in OTP (every death
// in it carries the origin's reason, kill becoming killed), so the model
// needs no scheduling choices.
//
// Burst phase (half the cases). Deaths, links and monitors are then fired
// concurrently from several goroutines, so that Link and Monitor race
// deaths. The model cannot predict the interleaving, so the check is the set
// of invariants any interleaving must satisfy: exactly one Down per monitor
// whose target died (with the target's reason, or noproc for a monitor set
// up in the burst), none for a live target; a trapping survivor gets exactly
// one Exit per linked peer that died, with its reason; a non-trapping
// survivor has no peer that died abnormally; a name never points at a dead
// actor.
//
// Every case ends with Shutdown: no live actor, no name; TestMain's goleak
// checks the goroutines once all cases are done.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"pgregory.net/rapid"
)

var (
	gBoom    = actor.Atom("boom")
	gReasons = []actor.Reason{actor.Normal, gBoom, actor.Shutdown, actor.ShutdownWith{Reason: actor.Atom("x")}, actor.Kill}
	gNames   = []string{"n0", "n1", "n2"}
)

// gLog is what one actor's handler saw.
type gLog struct {
	mu    sync.Mutex
	exits []actor.Exit
	downs []actor.Down
}

func (l *gLog) snapshot() ([]actor.Exit, []actor.Down) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.exits), slices.Clone(l.downs)
}

// gActor logs Exit and Down messages and runs the functions it is called with.
func gActor(l *gLog) actor.Actor {
	return actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case actor.Request:
			c.Reply(v, v.Msg.(func(*actor.Context) any)(c))
		case actor.Exit:
			l.mu.Lock()
			l.exits = append(l.exits, v)
			l.mu.Unlock()
		case actor.Down:
			l.mu.Lock()
			l.downs = append(l.downs, v)
			l.mu.Unlock()
		}
	})
}

// ---- the model ----

type gExit struct {
	from   int // actor index; -1: from outside the System
	reason actor.Reason
}

type gDown struct {
	mon    int // index into gModel.mons
	target int
	reason actor.Reason
}

type gMon struct {
	watcher, target int
	ref             actor.Ref
	active          bool
}

type gModel struct {
	trap   []bool
	alive  []bool
	reason []actor.Reason
	links  map[[2]int]bool // {lo, hi}
	mons   []gMon
	names  map[string]int
	exits  [][]gExit // expected Exit messages, per actor
	downs  [][]gDown // expected Down messages, per watcher
}

func newModel(trap []bool) *gModel {
	n := len(trap)
	m := &gModel{trap: trap, alive: make([]bool, n), reason: make([]actor.Reason, n),
		links: map[[2]int]bool{}, names: map[string]int{}, exits: make([][]gExit, n), downs: make([][]gDown, n)}
	for i := range m.alive {
		m.alive[i] = true
	}
	return m
}

func lk(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }

func (m *gModel) nAlive() int {
	k := 0
	for _, a := range m.alive {
		if a {
			k++
		}
	}
	return k
}

// signal is an exit signal with reason r from `from` arriving at `to`
// (erlang:exit/2 when !link, a linked process's death when link).
func (m *gModel) signal(to, from int, r actor.Reason, link bool) {
	if !m.alive[to] {
		return // a signal to a dead process is a no-op
	}
	switch {
	case r == actor.Reason(actor.Kill) && !link:
		m.die(to, actor.Killed) // untrappable
	case m.trap[to]:
		m.exits[to] = append(m.exits[to], gExit{from, r})
	case r == actor.Reason(actor.Normal):
		if !link && from == to {
			m.die(to, actor.Normal) // exit(self(), normal)
		}
	default:
		m.die(to, r) // kill carried by a link is an ordinary reason
	}
}

func (m *gModel) die(x int, r actor.Reason) {
	m.alive[x], m.reason[x] = false, r
	for name, h := range m.names {
		if h == x {
			delete(m.names, name)
		}
	}
	for id := range m.mons {
		mon := &m.mons[id]
		if !mon.active {
			continue
		}
		if mon.target == x {
			mon.active = false
			m.downs[mon.watcher] = append(m.downs[mon.watcher], gDown{id, x, r})
		} else if mon.watcher == x {
			mon.active = false
		}
	}
	var peers []int
	for l := range m.links {
		if l[0] == x || l[1] == x {
			delete(m.links, l)
			peers = append(peers, l[0]+l[1]-x)
		}
	}
	slices.Sort(peers)
	for _, y := range peers {
		m.signal(y, x, r, true)
	}
}

// ---- the harness ----

type gCase struct {
	t     *rapid.T
	sys   *actor.System
	pids  []actor.Pid
	logs  []*gLog
	obs   actor.Pid
	olog  *gLog
	index map[actor.Pid]int
}

// call runs f in actor i and returns its result, or ErrNoProc if i is dead.
func (g *gCase) call(i int, f func(c *actor.Context) any) (any, error) {
	return g.sys.Call(g.pids[i], f, 10*time.Second)
}

// settle waits until exactly want actors (graph and observer) are live: every
// death so far is finalised and its slot reclaimed.
func (g *gCase) settle(want int, what string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		live := g.sys.Stats().Live
		if live == want {
			return
		}
		if live < want {
			g.t.Fatalf("after %s: %d live actors, model says %d", what, live, want)
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("after %s: %d live actors after 10 s, model says %d", what, live, want)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func (g *gCase) from(pid actor.Pid) int {
	if pid.IsZero() {
		return -1
	}
	if i, ok := g.index[pid]; ok {
		return i
	}
	return -2
}

func TestGraphLinksMonitors(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 6).Draw(rt, "n")
		trap := rapid.SliceOfN(rapid.Bool(), n, n).Draw(rt, "trap")
		sys, err := actor.Start(actor.Config{Schedulers: 2, MaxActors: n + 4})
		if err != nil {
			rt.Fatal(err)
		}
		g := &gCase{t: rt, sys: sys, index: map[actor.Pid]int{}, olog: &gLog{}}
		defer func() {
			// A trapping graph actor takes Shutdown's exit signal as a
			// message and runs on, so Shutdown would wait out its context:
			// kill them first, as a supervisor's brutal_kill would.
			for _, pid := range g.pids {
				sys.Exit(pid, actor.Kill)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := sys.Shutdown(ctx); err != nil {
				rt.Errorf("Shutdown: %v", err)
			}
			if st := sys.Stats(); st.Live != 0 {
				rt.Errorf("after Shutdown: %d live actors", st.Live)
			}
			if names := sys.Registered(); len(names) != 0 {
				rt.Errorf("after Shutdown: names %v", names)
			}
		}()
		for i := 0; i < n; i++ {
			var opts []actor.SpawnOption
			if trap[i] {
				opts = append(opts, actor.TrapExit())
			}
			l := &gLog{}
			pid, err := sys.Spawn(gActor(l), opts...)
			if err != nil {
				rt.Fatal(err)
			}
			g.pids, g.logs = append(g.pids, pid), append(g.logs, l)
			g.index[pid] = i
		}
		g.obs, err = sys.Spawn(gActor(g.olog))
		if err != nil {
			rt.Fatal(err)
		}
		obsRefs := map[actor.Ref]int{}
		for i, pid := range g.pids {
			v, err := sys.Call(g.obs, func(c *actor.Context) any { r, _ := c.Monitor(pid); return r }, 10*time.Second)
			if err != nil {
				rt.Fatal(err)
			}
			obsRefs[v.(actor.Ref)] = i
		}
		m := newModel(trap)
		g.sequential(m, rapid.IntRange(0, 25).Draw(rt, "ops"))
		g.settle(m.nAlive()+1, "the sequential phase")
		if rapid.Bool().Draw(rt, "burst") {
			g.burst(m, obsRefs)
		} else {
			g.checkModel(m, obsRefs)
		}
	})
}

// sequential draws and runs k operations, checking each against the model.
func (g *gCase) sequential(m *gModel, k int) {
	rt := g.t
	n := len(g.pids)
	idx := rapid.IntRange(0, n-1)
	reason := rapid.SampledFrom(gReasons)
	for step := 0; step < k; step++ {
		op := rapid.IntRange(0, 8).Draw(rt, "op")
		i, j := idx.Draw(rt, "i"), idx.Draw(rt, "j")
		var what string
		wasAlive := m.alive[i]
		v, err := any(nil), error(nil)
		switch op {
		case 0, 1: // link, twice as likely: links are the point
			what = fmt.Sprintf("link(%d, %d)", i, j)
			v, err = g.call(i, func(c *actor.Context) any { return c.Link(g.pids[j]) })
			if wasAlive {
				var want error
				switch {
				case i == j:
				case !m.alive[j]:
					want = actor.ErrNoProc
					if m.trap[i] {
						m.exits[i] = append(m.exits[i], gExit{j, actor.NoProc})
					}
				default:
					m.links[lk(i, j)] = true
				}
				if got, _ := v.(error); !errors.Is(got, want) && got != want {
					rt.Fatalf("%s = %v, want %v", what, got, want)
				}
			}
		case 2:
			what = fmt.Sprintf("unlink(%d, %d)", i, j)
			v, err = g.call(i, func(c *actor.Context) any { c.Unlink(g.pids[j]); return nil })
			if wasAlive {
				delete(m.links, lk(i, j))
			}
		case 3:
			if i == j {
				continue // a monitor of oneself can never fire
			}
			what = fmt.Sprintf("monitor(%d, %d)", i, j)
			v, err = g.call(i, func(c *actor.Context) any { r, _ := c.Monitor(g.pids[j]); return r })
			if wasAlive {
				id := len(m.mons)
				m.mons = append(m.mons, gMon{watcher: i, target: j, ref: v.(actor.Ref), active: m.alive[j]})
				if !m.alive[j] {
					m.downs[i] = append(m.downs[i], gDown{id, j, actor.NoProc})
				}
			}
		case 4:
			if len(m.mons) == 0 {
				continue
			}
			id := rapid.IntRange(0, len(m.mons)-1).Draw(rt, "mon")
			flush := rapid.Bool().Draw(rt, "flush")
			mon := &m.mons[id]
			i = mon.watcher
			wasAlive = m.alive[i]
			what = fmt.Sprintf("demonitor(%d, m%d, flush=%v)", i, id, flush)
			v, err = g.call(i, func(c *actor.Context) any { return c.Demonitor(mon.ref, flush) })
			if wasAlive {
				// A Down already delivered has been handled (the call
				// came after it), so flush finds nothing to remove.
				if v != mon.active {
					rt.Fatalf("%s = %v, want %v", what, v, mon.active)
				}
				mon.active = false
			}
		case 5:
			name := rapid.SampledFrom(gNames).Draw(rt, "name")
			what = fmt.Sprintf("register(%q, %d)", name, i)
			got := g.sys.Register(name, g.pids[i])
			var want error
			if !wasAlive {
				want = actor.ErrNoProc
			} else if _, taken := m.names[name]; taken {
				want = actor.ErrNameTaken
			} else if slices.Contains(maps(m.names), i) {
				want = actor.ErrAlreadyNamed
			} else {
				m.names[name] = i
			}
			if !errors.Is(got, want) && got != want {
				rt.Fatalf("%s = %v, want %v", what, got, want)
			}
			wasAlive = true // no call, so no ErrNoProc to expect
		case 6:
			r := reason.Draw(rt, "reason")
			what = fmt.Sprintf("%d stops with %v", i, r)
			v, err = g.call(i, func(c *actor.Context) any { c.Stop(r); return nil })
			if wasAlive {
				m.die(i, r)
			}
		case 7:
			r := reason.Draw(rt, "reason")
			what = fmt.Sprintf("%d: exit(%d, %v)", i, j, r)
			v, err = g.call(i, func(c *actor.Context) any { return c.Exit(g.pids[j], r) })
			if wasAlive {
				m.signal(j, i, r, false)
			}
		case 8:
			r := reason.Draw(rt, "reason")
			what = fmt.Sprintf("outside: exit(%d, %v)", i, r)
			if err := g.sys.Exit(g.pids[i], r); err != nil {
				rt.Fatalf("%s: %v", what, err)
			}
			m.signal(i, -1, r, false)
			wasAlive = true
		}
		if !wasAlive && !errors.Is(err, actor.ErrNoProc) {
			rt.Fatalf("%s by a dead actor: %v, %v; want ErrNoProc", what, v, err)
		}
		// An actor the operation killed while its handler ran (exit(self(),
		// kill), a link cascade back to it) does not reply: ErrNoProc.
		if wasAlive && err != nil && !(!m.alive[i] && errors.Is(err, actor.ErrNoProc)) {
			rt.Fatalf("%s: %v", what, err)
		}
		g.settle(m.nAlive()+1, what)
	}
}

func maps(names map[string]int) []int {
	var v []int
	for _, i := range names {
		v = append(v, i)
	}
	return v
}

// syncAll makes every live graph actor and the observer handle everything
// already in their mailboxes (Exit and Down messages travel the user lane,
// ahead of a later call).
func (g *gCase) syncAll() {
	for _, pid := range append(slices.Clone(g.pids), g.obs) {
		g.sys.Call(pid, func(*actor.Context) any { return nil }, 10*time.Second)
	}
}

// checkObserver checks one Down per dead actor, with its reason, and returns
// the reasons.
func (g *gCase) checkObserver(obsRefs map[actor.Ref]int) map[int]actor.Reason {
	_, downs := g.olog.snapshot()
	dead := map[int]actor.Reason{}
	for _, d := range downs {
		i, ok := obsRefs[d.Ref]
		if !ok || g.pids[i] != d.Pid {
			g.t.Fatalf("observer: unexpected %+v", d)
		}
		if _, dup := dead[i]; dup {
			g.t.Fatalf("observer: second Down for actor %d: %+v", i, d)
		}
		dead[i] = d.Reason
	}
	for i, pid := range g.pids {
		if _, ok := dead[i]; ok == g.sys.Alive(pid) {
			g.t.Fatalf("actor %d: alive %v, observer's Down %v", i, g.sys.Alive(pid), ok)
		}
	}
	return dead
}

// checkModel compares the System with the model's prediction.
func (g *gCase) checkModel(m *gModel, obsRefs map[actor.Ref]int) {
	rt := g.t
	g.syncAll()
	dead := g.checkObserver(obsRefs)
	for i := range g.pids {
		if r, ok := dead[i]; ok != !m.alive[i] || (ok && r != m.reason[i]) {
			rt.Fatalf("actor %d: died %v with %v; model: died %v with %v", i, ok, r, !m.alive[i], m.reason[i])
		}
	}
	refID := map[actor.Ref]int{}
	for id, mon := range m.mons {
		refID[mon.ref] = id
	}
	for i, l := range g.logs {
		if !m.alive[i] {
			continue // a dead actor's mailbox is gone
		}
		exits, downs := l.snapshot()
		var gotE []gExit
		for _, e := range exits {
			gotE = append(gotE, gExit{g.from(e.From), e.Reason})
		}
		if !sameMultiset(gotE, m.exits[i]) {
			rt.Fatalf("actor %d (trap %v) got Exit messages %v, model %v", i, m.trap[i], gotE, m.exits[i])
		}
		var gotD []gDown
		for _, d := range downs {
			id, ok := refID[d.Ref]
			if !ok {
				rt.Fatalf("actor %d: Down with an unknown ref: %+v", i, d)
			}
			gotD = append(gotD, gDown{id, g.from(d.Pid), d.Reason})
		}
		if !sameMultiset(gotD, m.downs[i]) {
			rt.Fatalf("actor %d got Downs %v, model %v", i, gotD, m.downs[i])
		}
		info, err := g.sys.Info(g.pids[i])
		if err != nil {
			rt.Fatal(err)
		}
		links, mons := 0, 1 // the observer's
		for l := range m.links {
			if l[0] == i || l[1] == i {
				links++
			}
		}
		for _, mon := range m.mons {
			if mon.active && mon.target == i {
				mons++
			}
		}
		if info.Links != links || info.Monitors != mons {
			rt.Fatalf("actor %d: %d links and %d monitors on it, model %d and %d", i, info.Links, info.Monitors, links, mons)
		}
	}
	for _, name := range gNames {
		pid, ok := g.sys.Whereis(name)
		h, want := m.names[name]
		if ok != want || (ok && pid != g.pids[h]) {
			rt.Fatalf("whereis(%s) = %v, %v; model %v, %v", name, pid, ok, h, want)
		}
	}
	g.checkSlots(m.nAlive() + 1)
}

// checkSlots spawns until the slab is full: every dead actor's slot must
// have come back.
func (g *gCase) checkSlots(live int) {
	free := g.sys.Stats().Live
	if free != live {
		g.t.Fatalf("%d live, want %d", free, live)
	}
	want := len(g.pids) + 4 - live
	got := 0
	deadline := time.Now().Add(5 * time.Second)
	for got < want {
		_, err := g.sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		switch {
		case err == nil:
			got++
		case errors.Is(err, actor.ErrTooManyActors) && time.Now().Before(deadline):
			time.Sleep(100 * time.Microsecond) // a slot is freed just after its death is visible
		default:
			g.t.Fatalf("spawned %d of the %d free slots: %v", got, want, err)
		}
	}
}

func sameMultiset[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[T]int{}
	for _, v := range a {
		count[v]++
	}
	for _, v := range b {
		if count[v]--; count[v] < 0 {
			return false
		}
	}
	return true
}

// ---- the burst ----

type gBurstOp struct {
	kind   int // 0 outside exit, 1 link, 2 monitor, 3 exit self
	i, j   int
	reason actor.Reason
	// Set by the acting handler itself, before it replies, so a reply lost
	// to a kill does not lose the result.
	ran bool
	err error
	ref actor.Ref
	mu  sync.Mutex
}

func (g *gCase) burst(m *gModel, obsRefs map[actor.Ref]int) {
	rt := g.t
	n := len(g.pids)
	idx := rapid.IntRange(0, n-1)
	sigReason := rapid.SampledFrom([]actor.Reason{actor.Normal, gBoom, actor.Kill, actor.Shutdown})
	ops := make([]*gBurstOp, rapid.IntRange(1, 10).Draw(rt, "burst ops"))
	for k := range ops {
		ops[k] = &gBurstOp{kind: rapid.IntRange(0, 3).Draw(rt, "kind"), i: idx.Draw(rt, "i"), j: idx.Draw(rt, "j"), reason: sigReason.Draw(rt, "reason")}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if op.kind == 0 {
				g.sys.Exit(g.pids[op.i], op.reason)
				return
			}
			g.call(op.i, func(c *actor.Context) any {
				var err error
				var ref actor.Ref
				switch op.kind {
				case 1:
					err = c.Link(g.pids[op.j])
				case 2:
					ref, err = c.Monitor(g.pids[op.j])
				case 3:
					err = c.Exit(c.Self(), gBoom)
				}
				op.mu.Lock()
				op.ran, op.err, op.ref = true, err, ref
				op.mu.Unlock()
				return nil
			})
		}()
	}
	close(start)
	wg.Wait()
	// Every death began inside an operation, but a cascade along links may
	// still be running: a call into an actor that exits fails as soon as
	// the dying actor's monitors are told, before its links are (OTP orders
	// signals to different receivers no more than that). An actor in the
	// middle of a cascade is dying (not Alive) yet still counted Live until
	// it has signalled its links and its slot is reclaimed, so the set of
	// live actors is fixed once Live is exactly the Alive graph actors plus
	// the observer (counted once, a cascade could still kill actors
	// counted alive).
	deadline := time.Now().Add(10 * time.Second)
	var alive int
	for {
		alive = 0
		for _, pid := range g.pids {
			if g.sys.Alive(pid) {
				alive++
			}
		}
		live := g.sys.Stats().Live
		if live == alive+1 {
			break
		}
		if time.Now().After(deadline) {
			rt.Fatalf("after the burst: %d live actors after 10 s, %d graph actors alive and the observer", live, alive)
		}
		time.Sleep(50 * time.Microsecond)
	}
	g.syncAll()
	dead := g.checkObserver(obsRefs)
	died := func(x int) (actor.Reason, bool) { r, ok := dead[x]; return r, ok }

	// Links at the end of the burst (none is removed in it) and the
	// expected extra Exit messages of the burst.
	links := map[[2]int]bool{}
	for l := range m.links {
		links[l] = true
	}
	extra := make([][]gExit, n)
	for _, op := range ops {
		op.mu.Lock()
		ran, err := op.ran, op.err
		op.mu.Unlock()
		switch {
		case op.kind == 0:
			extra[op.i] = append(extra[op.i], gExit{-1, op.reason})
		case !ran:
		case op.kind == 1 && err == nil && op.i != op.j:
			links[lk(op.i, op.j)] = true
		case op.kind == 1 && errors.Is(err, actor.ErrNoProc):
			extra[op.i] = append(extra[op.i], gExit{op.j, actor.NoProc})
		case op.kind == 3 && err == nil:
			extra[op.i] = append(extra[op.i], gExit{op.i, gBoom})
		}
	}
	for s := range g.pids {
		if _, ok := died(s); ok {
			continue
		}
		exits, downs := g.logs[s].snapshot()
		// Exits: the sequential phase's, the link deaths, the burst's own.
		wantE := slices.Clone(m.exits[s])
		for x := range g.pids {
			r, ok := died(x)
			if ok && links[lk(s, x)] && x != s {
				if !m.trap[s] && r != actor.Reason(actor.Normal) {
					rt.Fatalf("actor %d survived the abnormal death (%v) of its linked peer %d", s, r, x)
				}
				wantE = append(wantE, gExit{x, r})
			}
		}
		if m.trap[s] {
			for _, e := range extra[s] {
				if e.reason != actor.Reason(actor.Kill) {
					wantE = append(wantE, e)
				}
			}
		} else {
			wantE = nil // a non-trapping actor gets no Exit messages
		}
		var got []gExit
		for _, e := range exits {
			got = append(got, gExit{g.from(e.From), e.Reason})
		}
		if !sameMultiset(got, wantE) {
			rt.Fatalf("burst: actor %d (trap %v) got Exit messages %v, want %v", s, m.trap[s], got, wantE)
		}
		// Downs: one per monitor whose target died, none for a live one:
		// those of the sequential phase as the model says, those active
		// at the burst with the target's reason, the burst's with it or
		// noproc (the target died before the monitor reached it).
		type want struct {
			target int
			reason actor.Reason
			noproc bool // noproc also allowed
		}
		expect := map[actor.Ref]want{}
		for _, d := range m.downs[s] {
			expect[m.mons[d.mon].ref] = want{d.target, d.reason, false}
		}
		for _, mon := range m.mons {
			if r, ok := died(mon.target); ok && mon.watcher == s && mon.active {
				expect[mon.ref] = want{mon.target, r, false}
			}
		}
		for _, op := range ops {
			if r, ok := died(op.j); ok && op.kind == 2 && op.i == s && op.ran && op.err == nil {
				expect[op.ref] = want{op.j, r, true}
			}
		}
		seen := map[actor.Ref]bool{}
		for _, d := range downs {
			w, ok := expect[d.Ref]
			if !ok || seen[d.Ref] || g.pids[w.target] != d.Pid ||
				(d.Reason != w.reason && !(w.noproc && d.Reason == actor.Reason(actor.NoProc))) {
				rt.Fatalf("burst: actor %d: unexpected or repeated %+v; expected %+v", s, d, expect)
			}
			seen[d.Ref] = true
		}
		if len(seen) != len(expect) {
			rt.Fatalf("burst: actor %d got Downs %+v, expected %+v", s, downs, expect)
		}
	}
	for _, name := range gNames {
		if pid, ok := g.sys.Whereis(name); ok {
			if i, mine := g.index[pid]; !mine || !g.sys.Alive(pid) {
				rt.Fatalf("burst: name %s points at dead actor %d", name, i)
			}
		}
	}
	g.checkSlots(alive + 1)
}

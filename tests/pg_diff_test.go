package tests

// The Go side of the process-group and registry scenarios in
// testdata/erlang/pg: each subtest runs the escript live (erldiff.Run), runs
// the same scenario on Colony, and compares the traces. The scenarios run in
// the link scenarios' harness (runLinks: a non-trapping main, lloop
// processes that forward to main); the helpers below mirror colony_pg.hrl.
//
// pg's process is the group server of OTP; Colony's groups live in the
// System (JoinGroup, LeaveGroup, GroupMembers, WhichGroups; a group monitor
// is main's own, Context.MonitorGroup), so there is nothing to start. pg drops a dead member when its own monitor fires, which can come
// after main has seen the member's Down; Colony removes it in the death's
// own step. members therefore waits, as members/1 does, until no member it
// lists is dead, and prints what it sees after about a second either way.

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/registry"
)

// pgScen is a running pg scenario.
type pgScen struct {
	*lscen
	// baseRegistered: the names registered when the scenario began
	// (start_pg/0's base_registered).
	baseRegistered []string
}

// as runs f as by: in main itself, or in a loop process through call/2.
func (s *pgScen) as(by actor.Pid, f func(c *actor.Context) any) any {
	if by == s.c.Self() {
		return f(s.c)
	}
	return s.call(by, f)
}

// pgRes prints a JoinGroup or LeaveGroup error as pg's result: ok, or
// not_joined for registry.ErrNotJoined.
func pgRes(v any) string {
	err, _ := v.(error)
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, registry.ErrNotJoined):
		return "not_joined"
	}
	return "unexpected_error(" + err.Error() + ")"
}

// join is join/3: by calls JoinGroup(g, p).
func (s *pgScen) join(by actor.Pid, g string, p actor.Pid) {
	r := s.as(by, func(c *actor.Context) any { return c.System().JoinGroup(g, p) })
	s.ev("join", by, g, p, pgRes(r))
}

// joinDead is join/3 of a pid that is known to be dead. pg:join/2 returns
// ok for it and pg drops the entry when its monitor of the pid fires;
// JoinGroup refuses it with ErrNoProc and adds nothing (docs/guarantees.md).
// Both leave the group without it, which the scenario's next members line
// shows; so ErrNoProc for a dead pid prints as pg's ok, and anything else as
// pgRes prints it.
func (s *pgScen) joinDead(g string, d actor.Pid) {
	if s.c.System().Alive(d) {
		panic("joinDead of a live pid")
	}
	err := s.c.System().JoinGroup(g, d)
	r := pgRes(err)
	if errors.Is(err, actor.ErrNoProc) {
		r = "ok"
	}
	s.ev("join", s.c.Self(), g, d, r)
}

// leave is leave/3: by calls LeaveGroup(g, p).
func (s *pgScen) leave(by actor.Pid, g string, p actor.Pid) {
	r := s.as(by, func(c *actor.Context) any { return c.System().LeaveGroup(g, p) })
	s.ev("leave", by, g, p, pgRes(r))
}

// members is members/1: GroupMembers(g), sorted by name, once none of them
// is dead (or after about a second of polling).
func (s *pgScen) members(g string) {
	sys := s.c.System()
	var ms []actor.Pid
	for tries := 1000; ; tries-- {
		ms = sys.GroupMembers(g)
		if tries == 0 || !slices.ContainsFunc(ms, func(p actor.Pid) bool { return !sys.Alive(p) }) {
			break
		}
		s.c.Sleep(time.Millisecond)
	}
	names := make([]string, len(ms))
	for i, p := range ms {
		names[i] = s.nameOf(p)
	}
	slices.Sort(names)
	s.ev("members", g, anyList(names))
}

func (s *pgScen) nameOf(p actor.Pid) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fmtLocked(p)
}

func anyList(ss []string) []any {
	l := make([]any, len(ss))
	for i, x := range ss {
		l[i] = x
	}
	return l
}

func (s *pgScen) reg(name string, p actor.Pid) {
	s.ev("register", name, p, bif(s.c.System().Register(name, p)))
}

func (s *pgScen) unreg(name string) {
	s.ev("unregister", name, bif(s.c.System().Unregister(name)))
}

func (s *pgScen) where(name string) {
	p, _ := s.c.System().Whereis(name) // the zero Pid prints as undefined
	s.ev("whereis", name, p)
}

// registeredNames is registered_names/0: Registered() less the names held
// when the scenario began, sorted.
func (s *pgScen) registeredNames() {
	var names []string
	for _, n := range s.c.System().Registered() {
		if !slices.Contains(s.baseRegistered, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	s.ev("registered", anyList(names))
}

// registeredName is registered_name/1: process_info(P, registered_name) is
// Info's Name, [] when it is empty, undefined when Info says ErrNoProc.
func (s *pgScen) registeredName(p actor.Pid) {
	info, err := s.c.System().Info(p)
	var r any = info.Name
	switch {
	case errors.Is(err, actor.ErrNoProc):
		r = undefined
	case err != nil:
		r = "unexpected_error(" + err.Error() + ")"
	case info.Name == "":
		r = []any{}
	}
	s.ev("registered_name", p, r)
}

// gmon is gmon/1: MonitorGroup(g) in main, its ref named as mon/1 names a
// monitor's; prints "monitor <g> <ref> [<p>,...]" with the snapshot sorted
// by name.
func (s *pgScen) gmon(g string) actor.Ref {
	ref, ms, err := s.c.MonitorGroup(g)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.nref++
	s.refs[ref] = fmt.Sprintf("m%d", s.nref)
	s.mu.Unlock()
	names := make([]string, len(ms))
	for i, p := range ms {
		names[i] = s.nameOf(p)
	}
	slices.Sort(names)
	s.ev("monitor", g, ref, anyList(names))
	return ref
}

// awaitGroup is await_group/1: the next GroupChange of ref, printed as
// "group <ref> join|leave <g> [<p>,...]".
func (s *pgScen) awaitGroup(ref actor.Ref) {
	m, _ := s.c.Receive(func(m any) bool { gc, ok := m.(actor.GroupChange); return ok && gc.Ref == ref }, actor.Infinity)
	gc := m.(actor.GroupChange)
	verb := "leave"
	if gc.Joined {
		verb = "join"
	}
	pids := make([]any, len(gc.Pids))
	for i, p := range gc.Pids {
		pids[i] = p
	}
	s.ev("group", ref, verb, gc.Group, pids)
}

// gdemon is gdemon/1: DemonitorGroup(ref), true printed as pg's ok.
func (s *pgScen) gdemon(ref actor.Ref) {
	r := "false"
	if s.c.DemonitorGroup(ref) {
		r = "ok"
	}
	s.ev("demonitor", ref, r)
}

// whichGroups is which_groups/0 (WhichGroups is sorted already; sorted
// again as the escript does).
func (s *pgScen) whichGroups() {
	gs := slices.Sorted(slices.Values(s.c.System().WhichGroups()))
	s.ev("which_groups", anyList(gs))
}

func (s *pgScen) dieBy(p actor.Pid, r actor.Reason) actor.Ref {
	m := s.mon(p)
	s.die(p, r)
	return m
}

var pgScenarios = map[string]func(s *pgScen){
	"join_members": func(s *pgScen) {
		me := s.c.Self()
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.members("g")
		s.join(me, "g", a)
		s.members("g")
		s.join(me, "g", b)
		s.join(c, "g", c)
		s.members("g")
		s.members("nobody")
		s.mailbox()
	},
	"join_twice": func(s *pgScen) {
		me := s.c.Self()
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.join(me, "g", a)
		s.join(me, "g", b)
		s.join(me, "g", a)
		s.members("g")
		s.leave(me, "g", a)
		s.members("g")
		s.leave(a, "g", a)
		s.members("g")
		s.leave(me, "g", a)
		s.members("g")
		s.mailbox()
	},
	"leave_not_joined": func(s *pgScen) {
		me := s.c.Self()
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.leave(me, "g", a)
		s.join(me, "g", a)
		s.leave(me, "g", b)
		s.leave(me, "h", a)
		s.leave(me, "g", me)
		s.members("g")
		s.leave(me, "g", a)
		s.leave(me, "g", a)
		s.members("g")
		s.mailbox()
	},
	"member_dies": func(s *pgScen) {
		me := s.c.Self()
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.join(me, "g", a)
		s.join(me, "g", a)
		s.join(me, "h", a)
		s.join(me, "g", b)
		s.join(me, "g", c)
		s.join(me, "h", c)
		s.members("g")
		s.members("h")
		s.awaitDown(s.dieBy(a, boom))
		s.members("g")
		s.members("h")
		s.leave(me, "g", a)
		s.awaitDown(s.dieBy(b, actor.Normal))
		s.members("g")
		mc := s.mon(c)
		must(s.c.Exit(c, actor.Kill))
		s.awaitDown(mc)
		s.members("g")
		s.members("h")
		s.mailbox()
	},
	"several_groups": func(s *pgScen) {
		me := s.c.Self()
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.join(me, "g1", a)
		s.join(me, "g2", a)
		s.join(me, "g3", a)
		s.join(me, "g2", b)
		s.leave(me, "g2", a)
		s.members("g1")
		s.members("g2")
		s.members("g3")
		s.join(a, "g2", a)
		s.members("g2")
		s.awaitDown(s.dieBy(a, boom))
		s.members("g1")
		s.members("g2")
		s.members("g3")
		s.mailbox()
	},
	"join_dead": func(s *pgScen) {
		me := s.c.Self()
		d := s.deadPid("d")
		s.joinDead("g", d)
		s.members("g")
		s.leave(me, "g", d)
		a := s.spawnLoop("a")
		s.join(me, "g", a)
		s.joinDead("g", d)
		s.members("g")
		s.mailbox()
	},
	"monitor_join_leave": func(s *pgScen) {
		me := s.c.Self()
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.join(me, "g", a)
		s.join(me, "g", a)
		m1 := s.gmon("g")
		s.join(me, "g", b)
		s.awaitGroup(m1)
		s.join(c, "g", c)
		s.awaitGroup(m1)
		s.leave(me, "g", a)
		s.awaitGroup(m1)
		s.leave(me, "h", a)
		s.leave(me, "g", me)
		s.join(me, "h", a)
		s.leave(b, "g", b)
		s.awaitGroup(m1)
		m2 := s.gmon("g")
		s.join(me, "g", b)
		s.awaitGroup(m1)
		s.awaitGroup(m2)
		s.gmon("nobody")
		s.whichGroups()
		s.members("g")
		s.mailbox()
	},
	"monitor_member_dies": func(s *pgScen) {
		me := s.c.Self()
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.join(me, "g", a)
		s.join(me, "g", b)
		s.join(me, "g", a)
		s.join(me, "h", a)
		mg := s.gmon("g")
		mh := s.gmon("h")
		s.whichGroups()
		ma := s.mon(a)
		must(s.c.Exit(a, actor.Kill))
		s.awaitDown(ma)
		s.awaitGroup(mg)
		s.awaitGroup(mg)
		s.awaitGroup(mh)
		s.members("g")
		s.whichGroups()
		s.awaitDown(s.dieBy(b, actor.Normal))
		s.awaitGroup(mg)
		s.members("g")
		s.whichGroups()
		s.mailbox()
	},
	"monitor_demonitor": func(s *pgScen) {
		me := s.c.Self()
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		m1 := s.gmon("g")
		m2 := s.gmon("g")
		s.join(me, "g", a)
		s.join(me, "g", b)
		s.awaitGroup(m1)
		s.gdemon(m1)
		s.gdemon(m1)
		s.join(me, "g", a)
		s.awaitGroup(m2)
		s.awaitGroup(m2)
		s.awaitGroup(m2)
		s.gdemon(s.mon(a))
		s.members("g")
		s.mailbox()
	},
	"join_by_other": func(s *pgScen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.join(b, "g", a)
		s.join(b, "g", b)
		s.members("g")
		s.awaitDown(s.dieBy(b, boom))
		s.members("g")
		s.leave(c, "g", a)
		s.members("g")
		s.mailbox()
	},
	"registered_list": func(s *pgScen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.registeredNames()
		s.reg("alpha", a)
		s.reg("beta", b)
		s.ev("call", c, linkRes(s.call(c, func(cx *actor.Context) any { return cx.Register("gamma") })))
		s.registeredNames()
		s.unreg("beta")
		s.registeredNames()
		s.awaitDown(s.dieBy(a, boom))
		s.registeredNames()
		s.reg("alpha", b)
		s.registeredNames()
		s.mailbox()
	},
	"registered_name": func(s *pgScen) {
		a := s.spawnLoop("a")
		s.registeredName(a)
		s.reg("worker", a)
		s.registeredName(a)
		s.unreg("worker")
		s.registeredName(a)
		s.ev("call", a, linkRes(s.call(a, func(cx *actor.Context) any { return cx.Register("other") })))
		s.registeredName(a)
		s.awaitDown(s.dieBy(a, boom))
		s.registeredName(a)
		s.where("other")
		s.mailbox()
	},
	"name_free_at_exit": func(s *pgScen) {
		main := s.c.Self()
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.reg("worker", a)
		s.trap(b)
		s.link(b, a)
		s.cast(b, func(c *actor.Context) {
			m, _ := c.Receive(func(m any) bool { e, ok := m.(actor.Exit); return ok && e.From == a }, actor.Infinity)
			w, _ := c.System().Whereis("worker")
			reg := bif(c.Register("worker"))
			c.Send(main, lfwd{c.Self(), tup{"exit_seen", a, m.(actor.Exit).Reason, w, reg}})
		})
		s.die(a, boom)
		s.awaitFwd(b)
		s.where("worker")
		s.mailbox()
	},
	"spawn_name": func(s *pgScen) {
		// start/2 in spawn_name.escript starts a gen_server with
		// {local, Name}; here a loop actor spawned with the Name option,
		// which forwards its messages to main as that gen_server's
		// handle_info does. A taken name is ErrNameTaken, OTP's
		// {error, {already_started, Pid}}; neither side prints the pid.
		start := func(id, name string) {
			pid, err := s.c.Spawn(s.lloop(id), actor.Name(name))
			var r any = "ok"
			switch {
			case errors.Is(err, actor.ErrNameTaken):
				r = tup{"error", "already_started"}
			case err != nil:
				r = "unexpected_error(" + err.Error() + ")"
			default:
				s.name(pid, id)
			}
			s.ev("start", id, name, r)
		}
		start("a", "worker")
		s.where("worker")
		must(s.c.System().SendName("worker", actor.Atom("hello")))
		s.awaitFwd(s.pid("a"))
		start("b", "worker")
		s.where("worker")
		start("b", "other")
		ma := s.mon(s.pid("a"))
		must(s.c.Exit(s.pid("a"), boom))
		s.awaitDown(ma)
		start("c", "worker")
		s.where("worker")
		must(s.c.System().SendName("worker", actor.Atom("again")))
		s.awaitFwd(s.pid("c"))
		s.registeredNames()
		s.mailbox()
	},
	"start_fail_name": func(s *pgScen) {
		// start/3 in start_fail_name.escript: gen_server:start({local,
		// Name}, ...) from main; here StartServer with the Name spawn
		// option, from main's handler (gen_server:start does not link).
		start := func(id, name, init string) {
			pid, err := actor.StartServer(s.c.System(), &initServer{init: init}, actor.WithSpawn(actor.Name(name)))
			var r any = "ok"
			var se *actor.StartError
			switch {
			case errors.Is(err, actor.ErrIgnore):
				r = "ignore"
			case errors.As(err, &se):
				r = tup{"error", se.Reason}
			case err != nil:
				r = "unexpected_error(" + err.Error() + ")"
			default:
				s.name(pid, id)
			}
			s.ev("start", id, name, r)
		}
		start("a", "worker", "stop")
		s.where("worker")
		start("b", "worker", "run")
		s.where("worker")
		start("c", "other", "ignore")
		s.where("other")
		start("d", "other", "run")
		s.where("other")
		s.registeredNames()
		s.mailbox()
	},
}

// initServer is start_fail_name.escript's gen_server: its Init stops with
// boom, ignores, or runs, as init says.
type initServer struct {
	actor.ServerBase
	init string
}

func (v *initServer) Init(*actor.Context) error {
	switch v.init {
	case "stop":
		return actor.Stop(boom)
	case "ignore":
		return actor.ErrIgnore
	}
	return nil
}

func TestPgDiff(t *testing.T) {
	runGroup(t, "pg", pgScenarios, func(t *testing.T, body func(*pgScen)) []string {
		return runLinks(t, func(s *lscen) {
			body(&pgScen{lscen: s, baseRegistered: s.c.System().Registered()})
		})
	})
}

package tests

// The Go side of the link, monitor and registry scenarios in
// testdata/erlang/links: each test runs the escript live (erldiff.Run), runs
// the same scenario on Colony, and compares the traces. The Go helpers below
// mirror colony_trace.hrl: scenario processes run lloop, which serves
// lcall/lcast and forwards every other message to main; only main prints.
// Unlike the supervisor scenarios, main does not trap exits (an escript's
// main process does not).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

type (
	lcallMsg struct {
		from actor.Pid
		id   int
		f    func(c *actor.Context) any
	}
	lreplyMsg struct {
		id int
		v  any
	}
	lcastMsg struct{ f func(c *actor.Context) }
	lfwd     struct {
		from actor.Pid
		msg  any
	}
	lgo struct{}
)

// lscen is a running link scenario.
type lscen struct {
	mainProc
	calls int
}

// bif prints the result of a Go call as the Erlang BIF's result: true, or
// the reason it raises (badarg, noproc).
func bif(err error) string {
	switch {
	case err == nil:
		return "true"
	case errors.Is(err, actor.ErrNoProc):
		return "noproc"
	case errors.Is(err, actor.ErrNameTaken), errors.Is(err, actor.ErrAlreadyNamed),
		errors.Is(err, actor.ErrNotRegistered), errors.Is(err, actor.ErrBadName):
		return "badarg"
	}
	return "unexpected_error(" + err.Error() + ")"
}

// lloop is colony_trace.hrl's loop/0.
func (s *lscen) lloop(name string) actor.Actor {
	t := s.tracer
	return actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case lcallMsg:
			c.Send(m.from, lreplyMsg{m.id, m.f(c)})
		case lcastMsg:
			m.f(c)
		default:
			c.Send(t.main, lfwd{c.Self(), msg})
		}
	})
}

// spawnLoop is spawn_loop/1.
func (s *lscen) spawnLoop(name string) actor.Pid {
	pid, err := s.c.Spawn(s.lloop(name))
	if err != nil {
		panic(err)
	}
	s.name(pid, name)
	return pid
}

// spawnNamed spawns a named actor running a (spawn_named/2).
func (s *lscen) spawnNamed(name string, a actor.Actor) actor.Pid {
	pid, err := s.c.Spawn(a)
	if err != nil {
		panic(err)
	}
	s.name(pid, name)
	return pid
}

// call is call/2: a round trip that runs f inside pid.
func (s *lscen) call(pid actor.Pid, f func(c *actor.Context) any) any {
	s.calls++
	id := s.calls
	s.c.Send(pid, lcallMsg{s.c.Self(), id, f})
	m, _ := s.c.Receive(func(m any) bool { r, ok := m.(lreplyMsg); return ok && r.id == id }, actor.Infinity)
	return m.(lreplyMsg).v
}

func (s *lscen) cast(pid actor.Pid, f func(c *actor.Context)) { s.c.Send(pid, lcastMsg{f}) }

// die is cast(P, fun() -> exit(R) end).
func (s *lscen) die(pid actor.Pid, r actor.Reason) {
	s.cast(pid, func(c *actor.Context) { c.Stop(r) })
}

func (s *lscen) trap(pid actor.Pid) {
	if prev := s.call(pid, func(c *actor.Context) any { return c.TrapExit(true) }); prev != false {
		panic("trap_exit was already set")
	}
}

func (s *lscen) link(a, b actor.Pid) {
	if err := s.call(a, func(c *actor.Context) any { return c.Link(b) }); err != nil {
		panic(err)
	}
}

func (s *lscen) awaitDead(pid actor.Pid) {
	ref, _ := s.c.Monitor(pid)
	s.c.Receive(func(m any) bool { d, ok := m.(actor.Down); return ok && d.Ref == ref }, actor.Infinity)
}

func (s *lscen) printMsg(to actor.Pid, m any) {
	switch v := m.(type) {
	case actor.Down:
		if v.Name != "" { // a monitor by name: OTP's DOWN names {Name, Node}
			s.ev("down", v.Ref, tup{actor.Atom(v.Name), actor.Atom("nonode@nohost")}, v.Reason)
			return
		}
		s.ev("down", v.Ref, v.Pid, v.Reason)
	case actor.Exit:
		s.ev("exit", to, v.From, v.Reason)
	default:
		s.ev("recv", to, v)
	}
}

// awaitFwd is await_fwd/1.
func (s *lscen) awaitFwd(from actor.Pid) {
	m, _ := s.c.Receive(func(m any) bool { f, ok := m.(lfwd); return ok && f.from == from }, actor.Infinity)
	s.printMsg(from, m.(lfwd).msg)
}

// recv is recv/0.
func (s *lscen) recv() {
	m, _ := s.c.Receive(nil, actor.Infinity)
	s.printMsg(s.c.Self(), m)
}

func (s *lscen) alive(pid actor.Pid) { s.ev("alive", pid, s.c.System().Alive(pid)) }

// links prints P's link set. Colony exposes only the number of links
// (ActorInfo.Links), so the scenario passes the peers it expects and the
// line prints them only if the count matches.
func (s *lscen) links(pid actor.Pid, want ...actor.Pid) {
	var n int
	if pid == s.c.Self() {
		info, _ := s.c.System().Info(pid)
		n = info.Links
	} else {
		n = s.call(pid, func(c *actor.Context) any { info, _ := c.System().Info(c.Self()); return info.Links }).(int)
	}
	l := []any{}
	if n == len(want) {
		for _, p := range want {
			l = append(l, p)
		}
	} else {
		l = append(l, fmt.Sprintf("count_%d", n))
	}
	s.ev("links", pid, l)
}

func (s *lscen) mailbox() { s.printMailbox(s.drainMailbox()) }

// runLinks runs body in a non-trapping main actor and returns the trace.
func runLinks(t *testing.T, body func(s *lscen)) []string {
	t.Helper()
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}()
	tr := newTracer()
	done := make(chan struct{})
	mainPid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if _, ok := msg.(lgo); !ok {
			return
		}
		defer close(done)
		body(&lscen{mainProc: mainProc{tracer: tr, c: c}})
		c.Stop(actor.Normal)
	}))
	if err != nil {
		t.Fatal(err)
	}
	tr.main = mainPid
	tr.name(mainPid, "main")
	sys.Send(mainPid, lgo{})
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("scenario did not finish; trace so far:\n%s", strings.Join(tr.lines, "\n"))
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	// An escript ends with halt, which kills every process at once. Do the
	// same before Shutdown: a trapping scenario actor turns Shutdown's exit
	// signal into an Exit message that lloop forwards to the (dead) main
	// and runs on, so Shutdown would wait out its whole context (5 s)
	// before its final kill.
	for pid := range tr.names {
		sys.Exit(pid, actor.Kill)
	}
	return append([]string(nil), tr.lines...)
}

var boom = actor.Atom("boom")

var linkScenarios = map[string]func(s *lscen){
	"chain_abnormal": func(s *lscen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.link(a, b)
		s.link(b, c)
		ma, mb, mc := s.mon(a), s.mon(b), s.mon(c)
		s.die(c, boom)
		s.awaitDown(mc)
		s.awaitDown(mb)
		s.awaitDown(ma)
		s.mailbox()
	},
	"trap_exit_message": func(s *lscen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.trap(a)
		s.link(a, b)
		s.link(a, c)
		mb := s.mon(b)
		s.die(b, boom)
		s.awaitDown(mb)
		s.awaitFwd(a)
		mc := s.mon(c)
		s.die(c, actor.Normal)
		s.awaitDown(mc)
		s.awaitFwd(a)
		s.links(a)
		s.alive(a)
		s.mailbox()
	},
	"kill_trapping": func(s *lscen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.trap(a)
		s.trap(b)
		s.link(a, b)
		s.link(a, c)
		ma, mc := s.mon(a), s.mon(c)
		s.c.Exit(a, actor.Kill)
		s.awaitDown(ma)
		s.awaitFwd(b)
		s.awaitDown(mc)
		s.alive(b)
		s.mailbox()
	},
	"normal_no_propagate": func(s *lscen) {
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.link(a, b)
		mb := s.mon(b)
		s.die(b, actor.Normal)
		s.awaitDown(mb)
		for s.call(a, func(c *actor.Context) any { i, _ := c.System().Info(c.Self()); return i.Links }).(int) != 0 {
			s.c.Sleep(time.Millisecond)
		}
		s.alive(a)
		s.links(a)
		s.mailbox()
	},
	"exit_normal_nontrapping": func(s *lscen) {
		a := s.spawnLoop("a")
		ma := s.mon(a)
		s.c.Exit(a, actor.Normal)
		s.ev("call", a, s.call(a, func(*actor.Context) any { return actor.Atom("still_here") }))
		s.alive(a)
		s.c.Exit(a, boom)
		s.awaitDown(ma)
		s.mailbox()
	},
	"exit_normal_trapping": func(s *lscen) {
		a := s.spawnLoop("a")
		s.trap(a)
		for _, r := range []actor.Reason{actor.Normal, boom, actor.ShutdownWith{Reason: actor.Atom("x")}} {
			s.c.Exit(a, r)
			s.awaitFwd(a)
		}
		s.alive(a)
		s.mailbox()
	},
	"exit_self_normal": func(s *lscen) {
		a := s.spawnLoop("a")
		ma := s.mon(a)
		s.cast(a, func(c *actor.Context) { c.Exit(c.Self(), actor.Normal) })
		s.awaitDown(ma)
		b := s.spawnLoop("b")
		s.trap(b)
		s.cast(b, func(c *actor.Context) { c.Exit(c.Self(), actor.Normal) })
		s.awaitFwd(b)
		s.alive(b)
		c := s.spawnLoop("c")
		mc := s.mon(c)
		s.die(c, actor.Normal)
		s.awaitDown(mc)
		s.mailbox()
	},
	"monitor_dead": func(s *lscen) {
		d := s.spawnNamed("d", actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
		s.c.Send(d, lgo{}) // Go actors run on their first message; Erlang's d runs at once.
		s.awaitDead(d)
		m1 := s.mon(d)
		s.awaitDown(m1)
		m2 := s.mon(d)
		s.awaitDown(m2)
		s.mailbox()
	},
	"two_monitors": func(s *lscen) {
		a := s.spawnLoop("a")
		m1, m2 := s.mon(a), s.mon(a)
		s.die(a, boom)
		s.awaitDown(m1)
		s.awaitDown(m2)
		s.mailbox()
	},
	"msg_before_down": func(s *lscen) {
		main := s.c.Self()
		a := s.spawnNamed("a", actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg != actor.Atom("go") {
				return
			}
			for i := 1; i <= 3; i++ {
				c.Send(main, tup{"msg", i})
			}
			c.Stop(boom)
		}))
		s.mon(a)
		s.c.Send(a, actor.Atom("go"))
		for i := 0; i < 4; i++ {
			s.recv()
		}
		s.mailbox()
	},
	"link_monitor_order": func(s *lscen) {
		s.c.TrapExit(true)
		main := s.c.Self()
		a := s.spawnLoop("a")
		must(s.c.Link(a))
		s.mon(a)
		s.cast(a, func(c *actor.Context) { c.Send(main, tup{"a", 1}); c.Stop(boom) })
		s.recv()
		s.recv()
		s.recv()
		b := s.spawnLoop("b")
		s.mon(b)
		must(s.c.Link(b))
		must(s.c.Exit(b, actor.Kill))
		s.recv()
		s.recv()
		c := s.spawnLoop("c")
		must(s.c.Link(c))
		mc := s.mon(c)
		s.die(c, actor.Normal)
		s.awaitDown(mc)
		s.exitNow(c)
		s.mailbox()
	},
	"monitor_self": func(s *lscen) {
		a := s.spawnLoop("a")
		var r actor.Ref
		// counts is {monitors, monitored_by}: ActorInfo's Watching and
		// Monitors.
		counts := func(c *actor.Context) any {
			i, err := c.Info()
			must(err)
			return tup{i.Watching, i.Monitors}
		}
		s.ev("call", a, s.call(a, func(c *actor.Context) any {
			var err error
			r, err = c.Monitor(c.Self())
			return err == nil
		}))
		s.ev("call", a, s.call(a, counts))
		s.ev("call", a, s.call(a, func(c *actor.Context) any { return c.Demonitor(r, false) }))
		s.ev("call", a, s.call(a, func(c *actor.Context) any {
			r2, err := c.Monitor(c.Self())
			must(err)
			// demonitor/1 always returns true; Demonitor's result is
			// [info]'s, printed second.
			c.Demonitor(r2, false)
			return tup{true, c.Demonitor(r2, false)}
		}))
		s.ev("call", a, s.call(a, func(c *actor.Context) any {
			var err error
			r, err = c.Monitor(c.Self())
			must(err)
			return counts(c)
		}))
		ma := s.mon(a)
		s.ev("call", a, s.call(a, counts))
		s.die(a, boom)
		s.awaitDown(ma)
		s.mailbox()
	},
	"monitor_name": func(s *lscen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		register := func(c *actor.Context) any { return bif(c.Register("srv")) }
		monName := func(name, refName string) func(c *actor.Context) any {
			return func(c *actor.Context) any {
				r, err := c.MonitorName(name)
				must(err)
				s.nameRef(r, refName)
				return true
			}
		}
		ok := func(*actor.Context) any { return actor.Atom("ok") }
		s.ev("call", a, s.call(a, register))
		s.ev("call", b, s.call(b, monName("srv", "mb1")))
		s.ev("call", a, s.call(a, func(c *actor.Context) any { return bif(c.System().Unregister("srv")) }))
		s.ev("call", c, s.call(c, register))
		mc := s.mon(c)
		s.die(c, boom)
		s.awaitDown(mc)
		s.ev("call", b, s.call(b, ok))
		s.die(a, actor.Atom("bang"))
		s.awaitFwd(b)
		s.call(b, monName("nosuch", "mb2"))
		s.ev("call", b, actor.Atom("ok"))
		s.awaitFwd(b)
		d := s.spawnLoop("d")
		s.ev("call", d, s.call(d, register))
		s.ev("call", b, s.call(b, func(c *actor.Context) any {
			r, err := c.MonitorName("srv")
			must(err)
			return c.Demonitor(r, false)
		}))
		s.die(d, boom)
		s.awaitDead(d)
		s.ev("call", b, s.call(b, ok))
		s.mailbox()
	},
	"exit_self_signal": func(s *lscen) {
		main := s.c.Self()
		a := s.spawnLoop("a")
		ma := s.mon(a)
		s.cast(a, func(c *actor.Context) {
			c.Send(main, tup{"a", "before"})
			c.Exit(c.Self(), boom)
			c.Send(main, tup{"a", "after_exit"})
		})
		s.recv()
		s.awaitDown(ma)
		b := s.spawnLoop("b")
		s.trap(b)
		s.cast(b, func(c *actor.Context) {
			c.Send(c.Self(), actor.Atom("m1"))
			c.Exit(c.Self(), boom)
			c.Send(c.Self(), actor.Atom("m2"))
		})
		s.awaitFwd(b)
		s.awaitFwd(b)
		s.awaitFwd(b)
		s.alive(b)
		s.mailbox()
	},
	"register_taken": func(s *lscen) {
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		sys := s.c.System()
		reg := func(name string, p actor.Pid) {
			printed := name
			if name == "" {
				// Erlang forbids the name undefined; Colony's forbidden name is "".
				printed = "undefined"
			}
			s.ev("register", printed, p, bif(sys.Register(name, p)))
		}
		where := func() {
			p, _ := sys.Whereis("worker") // zero Pid prints as undefined
			s.ev("whereis", "worker", p)
		}
		reg("worker", a)
		reg("worker", b)
		reg("other", a)
		reg("worker", a)
		reg("", b)
		where()
		s.ev("unregister", "worker", bif(sys.Unregister("worker")))
		s.ev("unregister", "worker", bif(sys.Unregister("worker")))
		where()
		reg("worker", b)
		where()
		s.mailbox()
	},
	"name_vanishes": func(s *lscen) {
		sys := s.c.System()
		a := s.spawnLoop("a")
		s.ev("register", "worker", a, bif(sys.Register("worker", a)))
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		p, _ := sys.Whereis("worker")
		s.ev("whereis", "worker", p)
		b := s.spawnLoop("b")
		s.ev("register", "worker", b, bif(sys.Register("worker", b)))
		p, _ = sys.Whereis("worker")
		s.ev("whereis", "worker", p)
		sys.SendName("worker", actor.Atom("hello"))
		s.awaitFwd(b)
		s.mailbox()
	},
	"send_unregistered": func(s *lscen) {
		sys := s.c.System()
		// send: ErrNotRegistered is Erlang's badarg.
		sent := func(err error) string {
			if err == nil {
				return "ok"
			}
			return bif(err)
		}
		// Erlang has two spellings (Name ! Msg and erlang:send/2); Go has one.
		s.ev("send", "nobody", sent(sys.SendName("nobody", actor.Atom("hi"))))
		s.ev("send", "nobody", sent(sys.SendName("nobody", actor.Atom("hi"))))
		a := s.spawnNamed("a", actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg == actor.Atom("die") {
				c.Stop(actor.Normal)
			}
		}))
		if err := sys.Register("worker", a); err != nil {
			panic(err)
		}
		ma := s.mon(a)
		s.ev("send", "worker", sent(sys.SendName("worker", actor.Atom("die"))))
		s.awaitDown(ma)
		s.ev("send", "worker", sent(sys.SendName("worker", actor.Atom("hi"))))
		s.ev("send", a, sent(s.c.Send(a, actor.Atom("hi"))))
		s.mailbox()
	},
	"link_self": func(s *lscen) {
		a := s.spawnLoop("a")
		s.ev("link", a, a, linkRes(s.call(a, func(c *actor.Context) any { return c.Link(c.Self()) })))
		s.links(a)
		// unlink/1 returns true in Erlang; Colony's Unlink returns nothing.
		s.call(a, func(c *actor.Context) any { c.Unlink(c.Self()); return nil })
		s.ev("unlink", a, a, "true")
		s.alive(a)
		s.mailbox()
	},
	"unlink_then_die": func(s *lscen) {
		s.c.TrapExit(true)
		a := s.spawnLoop("a")
		if err := s.c.Link(a); err != nil {
			panic(err)
		}
		s.c.Unlink(a) // unlink/1 always returns true
		s.ev("unlink", "main", a, "true")
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		b, c := s.spawnLoop("b"), s.spawnLoop("c")
		s.link(b, c)
		s.call(b, func(cx *actor.Context) any { cx.Unlink(c); return nil })
		s.ev("unlink", b, c, "true")
		mc := s.mon(c)
		s.die(c, boom)
		s.awaitDown(mc)
		s.alive(b)
		s.mailbox()
	},
	"link_dead_nontrap": func(s *lscen) {
		d := s.deadPid("d")
		a := s.spawnLoop("a")
		// Erlang raises error noproc in a non-trapping caller; Colony returns
		// ErrNoProc, printed as noproc.
		err, _ := s.call(a, func(c *actor.Context) any { return c.Link(d) }).(error)
		s.ev("link", a, d, bif(err))
		s.links(a)
		s.alive(a)
		s.mailbox()
	},
	"link_dead_trap": func(s *lscen) {
		d := s.deadPid("d")
		a := s.spawnLoop("a")
		s.trap(a)
		// Erlang's link/1 returns true in a trapping caller (the noproc comes
		// as an 'EXIT' message); Colony returns ErrNoProc and also delivers
		// Exit{d, NoProc}. ErrNoProc from a trapping caller prints as true.
		err, _ := s.call(a, func(c *actor.Context) any { return c.Link(d) }).(error)
		r := bif(err)
		if errors.Is(err, actor.ErrNoProc) {
			r = "true"
		}
		s.ev("link", a, d, r)
		s.awaitFwd(a)
		s.links(a)
		s.alive(a)
		s.mailbox()
	},
	"register_dead": func(s *lscen) {
		sys := s.c.System()
		d := s.deadPid("d")
		// register/2 of a dead pid is badarg; Colony returns ErrNoProc.
		s.ev("register", "worker", d, regResult(sys.Register("worker", d)))
		p, _ := sys.Whereis("worker")
		s.ev("whereis", "worker", p)
		a := s.spawnLoop("a")
		s.ev("register", "worker", a, regResult(sys.Register("worker", a)))
		p, _ = sys.Whereis("worker")
		s.ev("whereis", "worker", p)
		s.mailbox()
	},
	"exit_to_dead": func(s *lscen) {
		d := s.spawnNamed("d", actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
		md := s.mon(d)
		s.c.Send(d, lgo{})
		s.awaitDown(md)
		// exit/2 to a dead pid returns true in Erlang; Colony may report
		// ErrNoProc, which is that same no-op.
		ex := func(r actor.Reason) string {
			if err := s.c.Exit(d, r); err != nil && !errors.Is(err, actor.ErrNoProc) {
				return bif(err)
			}
			return "true"
		}
		s.ev("exit2", d, boom, ex(boom))
		s.ev("exit2", d, "kill", ex(actor.Kill))
		s.c.Unlink(d)
		s.ev("unlink", "main", d, "true")
		// erlang:demonitor/1 always returns true; with [info] it reports
		// whether the monitor was active, which is Demonitor's result.
		s.c.Demonitor(md, false)
		s.ev("demonitor", md, "true")
		s.ev("demonitor", md, []any{"info"}, s.c.Demonitor(md, false))
		s.mailbox()
	},
	"exit_kill_self": func(s *lscen) {
		k, q, r := s.spawnLoop("k"), s.spawnLoop("q"), s.spawnLoop("r")
		s.trap(q)
		s.link(k, q)
		s.link(k, r)
		mk, mr := s.mon(k), s.mon(r)
		s.die(k, actor.Kill)
		s.awaitDown(mk)
		s.awaitFwd(q)
		s.awaitDown(mr)
		s.alive(q)
		sp, tp := s.spawnLoop("s"), s.spawnLoop("t")
		s.trap(sp)
		s.trap(tp)
		s.link(sp, tp)
		ms := s.mon(sp)
		s.cast(sp, func(c *actor.Context) { c.Exit(c.Self(), actor.Kill) })
		s.awaitDown(ms)
		s.awaitFwd(tp)
		s.alive(tp)
		s.mailbox()
	},
}

// initLoop runs init as the actor's Init and then loop's Receive.
type initLoop struct {
	init func(c *actor.Context)
	loop actor.Actor
}

func (a initLoop) Init(c *actor.Context)           { a.init(c) }
func (a initLoop) Receive(c *actor.Context, m any) { a.loop.Receive(c, m) }

// initActor runs f as the actor's Init (Erlang code that runs at spawn,
// before any message) and ignores messages.
type initActor func(c *actor.Context)

func (f initActor) Init(c *actor.Context)       { f(c) }
func (f initActor) Receive(*actor.Context, any) {}

var never = func(any) bool { return false }

func init() {
	linkScenarios["demonitor_flush"] = func(s *lscen) {
		dies := func(name string) actor.Pid {
			return s.spawnNamed(name, actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(boom) }))
		}
		// spawn_named(X, fun() -> receive go -> exit(boom) end end);
		// mon(X); X ! go; await_mailbox(1): the child exits on a message
		// sent after the monitor, so the Down carries boom on both sides.
		monDead := func(name string) actor.Ref {
			p := dies(name)
			m := s.mon(p)
			s.c.Send(p, lgo{})
			s.awaitMailbox(1)
			return m
		}
		m1 := monDead("a")
		s.c.Demonitor(m1, false) // demonitor/1 returns true
		s.ev("demonitor", m1, "true")
		s.peekMailbox()
		s.awaitDown(m1)
		m2 := monDead("b")
		s.c.Demonitor(m2, true) // demonitor(Ref, [flush]) returns true
		s.ev("demonitor", m2, []any{"flush"}, "true")
		s.mailbox()
		m3 := monDead("c")
		s.ev("demonitor", m3, []any{"flush", "info"}, s.c.Demonitor(m3, true))
		s.mailbox()
		d := s.spawnLoop("d")
		m4 := s.mon(d)
		s.ev("demonitor", m4, []any{"info"}, s.c.Demonitor(m4, false))
		s.ev("demonitor", m4, []any{"info"}, s.c.Demonitor(m4, false))
		s.c.Demonitor(m4, false)
		s.ev("demonitor", m4, "true")
		m5 := s.mon(d)
		s.die(d, boom)
		s.awaitDown(m5)
		s.mailbox()
	}
	linkScenarios["kill_blocked_receive"] = func(s *lscen) {
		block := func(c *actor.Context) { c.Receive(never, actor.Infinity) }
		a := s.spawnNamed("a", initActor(block))
		b := s.spawnNamed("b", initActor(func(c *actor.Context) { c.TrapExit(true); block(c) }))
		c := s.spawnNamed("c", initActor(block)) // receive ... after infinity is the same wait
		d := s.spawnNamed("d", initActor(func(c *actor.Context) { c.Receive(never, time.Minute) }))
		ma, mb, mc, md := s.mon(a), s.mon(b), s.mon(c), s.mon(d)
		s.c.Exit(a, actor.Kill)
		s.awaitDown(ma)
		// b must be trapping before the signal arrives: wait until it is.
		for {
			if i, err := s.c.System().Info(b); err == nil && i.TrapExit {
				break
			}
			s.c.Sleep(time.Millisecond)
		}
		s.c.Exit(b, actor.Kill)
		s.awaitDown(mb)
		s.c.Exit(c, boom)
		s.awaitDown(mc)
		s.c.Exit(d, actor.Kill)
		s.awaitDown(md)
		s.mailbox()
	}
	linkScenarios["link_idempotent"] = func(s *lscen) {
		s.c.TrapExit(true)
		a := s.spawnLoop("a")
		must(s.c.Link(a))
		must(s.c.Link(a))
		s.links(s.c.Self(), a)
		s.c.Unlink(a)
		s.ev("unlink", "main", a, "true")
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		b := s.spawnLoop("b")
		must(s.c.Link(b))
		main := s.c.Self()
		for _, target := range []actor.Pid{{}, main} {
			err := s.call(b, func(c *actor.Context) any {
				if target.IsZero() {
					return c.Link(c.Self())
				}
				return c.Link(target)
			})
			if err != nil {
				panic(err)
			}
		}
		mb := s.mon(b)
		s.die(b, boom)
		s.awaitDown(mb)
		s.awaitExit(b)
		s.mailbox()
	}
	linkScenarios["shutdown_tuple_reason"] = func(s *lscen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.trap(c)
		s.link(b, a)
		s.link(b, c)
		ma, mb := s.mon(a), s.mon(b)
		s.die(b, actor.ShutdownWith{Reason: actor.Atom("x")})
		s.awaitDown(mb)
		s.awaitDown(ma)
		s.awaitFwd(c)
		s.alive(c)
		mc := s.mon(c)
		d := s.spawnLoop("d")
		md := s.mon(d)
		s.c.Exit(d, actor.Shutdown)
		s.awaitDown(md)
		s.c.Exit(c, actor.Shutdown)
		s.awaitFwd(c)
		s.c.Exit(c, actor.Kill)
		s.awaitDown(mc)
		s.mailbox()
	}
	linkScenarios["spawn_link_crash_trapping"] = func(s *lscen) {
		s.c.TrapExit(true)
		for _, k := range []struct {
			name string
			r    actor.Reason
		}{{"a", boom}, {"b", actor.ShutdownWith{Reason: actor.Atom("x")}}, {"c", actor.Normal}} {
			// spawn_link_named(N, fun() -> exit(R) end); fun() -> ok end
			// returns, which is exit(normal).
			r := k.r
			pid, err := s.c.SpawnLink(initActor(func(c *actor.Context) { c.Stop(r) }))
			must(err)
			s.name(pid, k.name)
			s.awaitExit(pid)
		}
		s.alive(s.c.Self())
		s.mailbox()
	}
}

// spawnMon is spawn_monitor/1 with the pid named name and the ref named as
// mon names refs.
func (s *lscen) spawnMon(name string, a actor.Actor) actor.Ref {
	pid, ref, err := s.c.SpawnMonitor(a)
	must(err)
	s.name(pid, name)
	s.mu.Lock()
	s.nref++
	s.refs[ref] = fmt.Sprintf("m%d", s.nref)
	s.mu.Unlock()
	return ref
}

// ownMailboxLen is process_info(self(), message_queue_len) inside a
// scenario process (c is its Context).
func ownMailboxLen(c *actor.Context) int {
	i, err := c.Info()
	if err != nil {
		panic(err)
	}
	return i.MailboxLen
}

// stopWith is an actor whose Init exits with r at once (spawn of
// fun() -> exit(R) end).
func stopWith(r actor.Reason) actor.Actor { return initActor(func(c *actor.Context) { c.Stop(r) }) }

func init() {
	linkScenarios["spawn_monitor_crash"] = func(s *lscen) {
		s.awaitDown(s.spawnMon("a", stopWith(boom)))
		s.awaitDown(s.spawnMon("b", stopWith(actor.Normal)))
		s.awaitDown(s.spawnMon("c", stopWith(actor.ShutdownWith{Reason: actor.Atom("x")})))
		d := s.spawnLoop("d")
		md := s.mon(d)
		s.cast(d, func(c *actor.Context) {
			if pid, err := c.SpawnLink(stopWith(boom)); err == nil {
				s.name(pid, "e")
			}
		})
		s.awaitDown(md)
		s.mailbox()
	}
	linkScenarios["spawn_monitor_outside"] = func(s *lscen) {
		// System.SpawnMonitor from plain Go code: here the main actor's
		// handler stands in for it and waits on the Watch off the
		// scheduler, printing the Watch's reason as await_down prints a
		// DOWN. The escript's spawn_monitor/1 is its twin.
		sys := s.c.System()
		killSelf := initActor(func(c *actor.Context) { c.Exit(c.Self(), actor.Kill) })
		for i, a := range []actor.Actor{stopWith(boom), stopWith(actor.Normal), stopWith(actor.ShutdownWith{Reason: actor.Atom("x")}), killSelf} {
			name := string(rune('a' + i))
			pid, w, err := sys.SpawnMonitor(a)
			must(err)
			s.name(pid, name)
			_, err = s.c.Blocking(func() (any, error) { <-w.Done(); return nil, nil }, actor.Infinity)
			must(err)
			s.ev("down", actor.Atom(fmt.Sprintf("m%d", i+1)), pid, w.Reason())
		}
		s.mailbox()
	}
	linkScenarios["init_ack"] = func(s *lscen) {
		// proc_lib:start_link is Context.StartLink; init_ack is InitAck.
		// Each child names itself first, as the escript's fun does.
		s.c.TrapExit(true)
		start := func(name string, init func(c *actor.Context), t time.Duration) {
			a := initLoop{init: func(c *actor.Context) { s.name(c.Self(), name); init(c) }, loop: s.lloop(name)}
			_, err := s.c.StartLink(a, t)
			var se *actor.StartError
			switch {
			case err == nil:
				s.ev("start", name, "ok")
			case errors.As(err, &se):
				s.ev("start", name, tup{"error", se.Reason})
			default:
				panic(err)
			}
		}
		start("a", func(c *actor.Context) { c.InitAck(nil) }, 5*time.Second)
		s.ev("call", s.pid("a"), s.call(s.pid("a"), func(*actor.Context) any { return actor.Atom("ok") }))
		start("b", func(c *actor.Context) { c.InitAck(actor.Stop(actor.Atom("bad_config"))) }, 5*time.Second)
		s.awaitExit(s.pid("b"))
		start("c", func(c *actor.Context) { c.Stop(boom) }, 5*time.Second)
		start("d", func(*actor.Context) {}, 100*time.Millisecond)
		s.awaitDead(s.pid("d"))
		s.alive(s.pid("d"))
		a := s.pid("a")
		ma := s.mon(a)
		s.c.Exit(a, actor.Kill)
		s.awaitDown(ma)
		s.awaitExit(a)
		s.mailbox()
	}
	linkScenarios["trap_exit_toggle"] = func(s *lscen) {
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.trap(a)
		s.link(a, b)
		ma, mb := s.mon(a), s.mon(b)
		s.die(b, boom)
		s.ev("call", a, s.call(a, func(c *actor.Context) any {
			for ownMailboxLen(c) < 1 {
				c.Sleep(time.Millisecond)
			}
			return c.TrapExit(false)
		}))
		s.awaitDown(mb)
		s.awaitFwd(a)
		s.alive(a)
		must(s.c.Exit(a, actor.Atom("bye")))
		s.awaitDown(ma)
		s.mailbox()
	}
	linkScenarios["demonitor_queued_twice"] = func(s *lscen) {
		a := s.spawnLoop("a")
		m1 := s.mon(a)
		s.die(a, boom)
		s.awaitMailbox(1)
		s.c.Demonitor(m1, false) // demonitor/1 returns true
		s.ev("demonitor", m1, "true")
		s.ev("demonitor", m1, []any{"info"}, s.c.Demonitor(m1, false))
		s.c.Demonitor(m1, false)
		s.ev("demonitor", m1, "true")
		s.peekMailbox()
		s.ev("demonitor", m1, []any{"flush", "info"}, s.c.Demonitor(m1, true))
		s.mailbox()
		m2 := s.mon(a)
		s.awaitMailbox(1)
		s.ev("demonitor", m2, []any{"info"}, s.c.Demonitor(m2, false))
		s.peekMailbox()
		s.c.Demonitor(m2, true) // demonitor(Ref, [flush]) returns true
		s.ev("demonitor", m2, []any{"flush"}, "true")
		s.mailbox()
	}
	chain := func(s *lscen, x, y, z actor.Pid) {
		s.link(x, y)
		s.link(y, z)
	}
	linkScenarios["chain_mixed_trap"] = func(s *lscen) {
		a, b, c := s.spawnLoop("a"), s.spawnLoop("b"), s.spawnLoop("c")
		s.trap(b)
		chain(s, a, b, c)
		mc := s.mon(c)
		s.die(c, boom)
		s.awaitDown(mc)
		s.awaitFwd(b)
		s.alive(a)
		s.alive(b)
		d, e, f := s.spawnLoop("d"), s.spawnLoop("e"), s.spawnLoop("f")
		s.trap(d)
		chain(s, d, e, f)
		me, mf := s.mon(e), s.mon(f)
		s.die(e, boom)
		s.awaitDown(me)
		s.awaitDown(mf)
		s.awaitFwd(d)
		s.alive(d)
		g, h, i := s.spawnLoop("g"), s.spawnLoop("h"), s.spawnLoop("i")
		s.trap(g)
		s.trap(h)
		s.trap(i)
		chain(s, g, h, i)
		mh := s.mon(h)
		must(s.c.Exit(h, actor.Kill))
		s.awaitDown(mh)
		s.awaitFwd(g)
		s.awaitFwd(i)
		s.alive(g)
		s.alive(i)
		s.mailbox()
	}
	linkScenarios["unlink_then_exit"] = func(s *lscen) {
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.link(b, a)
		mb := s.mon(b)
		s.cast(b, func(c *actor.Context) { must(c.Unlink(a)); c.Stop(boom) })
		s.awaitDown(mb)
		s.ev("call", a, s.call(a, func(*actor.Context) any { return actor.Atom("ok") }))
		s.alive(a)
		c, d := s.spawnLoop("c"), s.spawnLoop("d")
		s.trap(c)
		s.link(d, c)
		md := s.mon(d)
		s.cast(d, func(cx *actor.Context) {
			must(cx.Unlink(c))
			cx.Send(c, actor.Atom("after_unlink"))
			cx.Stop(boom)
		})
		s.awaitDown(md)
		s.awaitFwd(c)
		s.ev("call", c, s.call(c, func(cx *actor.Context) any { return tup{"message_queue_len", ownMailboxLen(cx)} }))
		e, f := s.spawnLoop("e"), s.spawnLoop("f")
		s.trap(e)
		s.link(f, e)
		s.cast(f, func(c *actor.Context) { must(c.Unlink(e)); must(c.Exit(e, boom)) })
		s.awaitFwd(e)
		s.alive(f)
		s.mailbox()
	}
	linkScenarios["exit_linked_sender"] = func(s *lscen) {
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		s.link(b, a)
		ma, mb := s.mon(a), s.mon(b)
		s.cast(b, func(c *actor.Context) { must(c.Exit(a, boom)) })
		s.awaitDown(ma)
		s.awaitDown(mb)
		c, d := s.spawnLoop("c"), s.spawnLoop("d")
		s.trap(c)
		s.link(c, d)
		md := s.mon(d)
		s.cast(c, func(cx *actor.Context) { must(cx.Exit(d, boom)) })
		s.awaitDown(md)
		s.awaitFwd(c)
		s.alive(c)
		s.mailbox()
	}
	linkScenarios["stop_custom_reason"] = func(s *lscen) {
		// {custom, 1}: a reason that is neither an atom nor a shutdown.
		custom := tup{"custom", 1}
		a, p, q := s.spawnLoop("a"), s.spawnLoop("p"), s.spawnLoop("q")
		s.trap(p)
		s.link(a, p)
		s.link(a, q)
		ma, mq := s.mon(a), s.mon(q)
		s.die(a, custom)
		s.awaitDown(ma)
		s.awaitFwd(p)
		s.awaitDown(mq)
		s.alive(p)
		r := s.spawnLoop("r")
		s.link(r, p)
		mr := s.mon(r)
		must(s.c.Exit(r, actor.ShutdownWith{Reason: actor.Atom("x")}))
		s.awaitDown(mr)
		s.awaitFwd(p)
		s.alive(p)
		s.mailbox()
	}
	linkScenarios["registry_reuse"] = func(s *lscen) {
		sys := s.c.System()
		reg := func(name string, p actor.Pid) { s.ev("register", name, p, bif(sys.Register(name, p))) }
		unreg := func(name string) { s.ev("unregister", name, bif(sys.Unregister(name))) }
		where := func(name string) {
			p, _ := sys.Whereis(name) // zero Pid prints as undefined
			s.ev("whereis", name, p)
		}
		a, b := s.spawnLoop("a"), s.spawnLoop("b")
		reg("worker", a)
		unreg("worker")
		reg("worker", b)
		where("worker")
		must(sys.SendName("worker", actor.Atom("hello")))
		s.awaitFwd(b)
		reg("other", a)
		where("other")
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		where("other")
		reg("other", b)
		unreg("worker")
		reg("other", b)
		where("other")
		must(sys.SendName("other", actor.Atom("again")))
		s.awaitFwd(b)
		c := s.spawnLoop("c")
		s.ev("call", c, linkRes(s.call(c, func(cx *actor.Context) any { return cx.Register("worker") })))
		where("worker")
		s.mailbox()
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// mailboxLen is the caller's mailbox length,
// process_info(self(), message_queue_len): Context.Info, which does not
// count the message being handled (System.Info(Self()) would, while the
// handler runs).
func (s *lscen) mailboxLen() int {
	i, err := s.c.Info()
	if err != nil {
		panic(err)
	}
	return i.MailboxLen
}

// awaitMailbox is await_mailbox/1: poll until the caller's mailbox holds
// at least n messages.
func (s *lscen) awaitMailbox(n int) {
	for s.mailboxLen() < n {
		s.c.Sleep(time.Millisecond)
	}
}

// peekMailbox is mailbox/0 where the script goes on to receive what it
// printed (process_info(self(), messages) does not take messages out): it
// prints the mailbox like mailbox and then sends the messages back to the
// caller, in order, for the receives that follow.
func (s *lscen) peekMailbox() {
	ms := s.drainMailbox()
	for _, m := range ms {
		s.c.Send(s.c.Self(), m)
	}
	s.printMailbox(ms)
}

// deadPid spawns a named actor and waits until it has exited normally.
func (s *lscen) deadPid(name string) actor.Pid {
	d := s.spawnNamed(name, actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
	s.c.Send(d, lgo{}) // Go actors run on their first message; Erlang's runs at once.
	s.awaitDead(d)
	return d
}

// exitNow is receive {'EXIT', P, R} -> ... after 0 -> ... end: it takes
// P's Exit if it is in the mailbox now, else prints "timeout main".
func (s *lscen) exitNow(p actor.Pid) {
	m, err := s.c.Receive(func(m any) bool { e, ok := m.(actor.Exit); return ok && e.From == p }, 0)
	if errors.Is(err, actor.ErrTimeout) {
		s.ev("timeout", "main")
		return
	}
	must(err)
	s.ev("exit", s.c.Self(), p, m.(actor.Exit).Reason)
}

func regResult(err error) string {
	if errors.Is(err, actor.ErrNoProc) {
		return "badarg"
	}
	return bif(err)
}
func TestLinksDiff(t *testing.T) {
	runGroup(t, "links", linkScenarios, runLinks)
}

func linkRes(v any) string { e, _ := v.(error); return bif(e) }

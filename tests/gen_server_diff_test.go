package tests

// The Go side of the gen_server scenarios in testdata/erlang/gen_server:
// each subtest runs the escript live (erldiff.Run), runs the same scenario
// on Colony, and compares the traces. gsrv below mirrors the escript's
// server (testdata/erlang/colony_gensrv.hrl) callback for callback; as
// there, only main prints: the server reports what its callbacks see to main
// (gsReport) and main prints each report with awaitGs. The scenarios run in
// the link scenarios' main actor (runLinks), which does not trap exits
// unless the scenario says so, like an escript's main process.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Messages of the gen_server scenarios besides the requests, casts and
// infos, which are tups and Atoms so that they print as the escript's terms.
type (
	gsReport struct {
		from  actor.Pid
		words []any
	}
	gsReplyFor  struct{ req actor.Request } // {reply_for, From}
	gsHolding   struct{ srv actor.Pid }     // {holding, Srv}
	gsReplied   struct{ ok bool }           // {replied, ok}
	gsRestarted struct{ by actor.Pid }      // {restarted, K}
	gsResult    struct {                    // {result, K, R}: K's call returned R
		from actor.Pid
		r    any
	}
)

// gsrvOpts are the server options of colony_gensrv.hrl.
type gsrvOpts struct {
	trap       bool
	init       string // "", "ignore", "stop", "block"
	stopReason actor.Reason
	reg        string    // the registered name ({local, Name}); "" for none
	gate       actor.Pid // gate => P: Init lets P queue messages first
	cont       []any     // cont => Cs: Init returns Continue(Cs)
}

// spawnOpts are the ServerOptions that start the server as start/4 does:
// with the Name spawn option for reg => Name.
func (o gsrvOpts) spawnOpts() []actor.ServerOption {
	if o.reg == "" {
		return nil
	}
	return []actor.ServerOption{actor.WithSpawn(actor.Name(o.reg))}
}

// gsrv mirrors the escript's gen_server.
//
// OTP's gen_server timeout belongs to one callback's return ({reply, R, S,
// T}): the next message cancels it, and the next callback sets a new one or
// none. Colony's SetReceiveTimeout stays set until changed, so every
// callback here first clears it and sets it again only where the escript's
// callback returns a timeout.
type gsrv struct {
	actor.ServerBase
	t     *tracer
	name  string
	o     gsrvOpts
	held  actor.Request
	rearm time.Duration // the pokes' timeout; 0: they return none
}

func (g *gsrv) report(c *actor.Context, words ...any) {
	c.Send(g.t.main, gsReport{c.Self(), words})
}

func (g *gsrv) Init(c *actor.Context) error {
	g.t.name(c.Self(), g.name)
	if g.o.trap {
		c.TrapExit(true)
	}
	if !g.o.gate.IsZero() {
		gate(c, g.o.gate)
	}
	switch g.o.init {
	case "ignore":
		return actor.ErrIgnore
	case "stop":
		return actor.Stop(g.o.stopReason)
	case "block":
		c.Receive(never, actor.Infinity)
	}
	if g.o.cont != nil {
		return actor.Continue(g.o.cont)
	}
	return nil
}

// gate is gate/1: p queues its messages to the server, then sends go.
func gate(c *actor.Context, p actor.Pid) {
	c.Send(p, gsHolding{c.Self()})
	c.Receive(func(m any) bool { return m == actor.Atom("go") }, actor.Infinity)
}

// HandleContinue is handle_continue/2: the arg is a list, reported one
// element per continue, the rest continued with.
func (g *gsrv) HandleContinue(c *actor.Context, arg any) {
	c.SetReceiveTimeout(0)
	cs := arg.([]any)
	g.report(c, "continue", cs[0])
	if st, ok := cs[0].(tup); ok && st[0] == "stop" {
		c.Stop(st[1])
		return
	}
	if len(cs) > 1 {
		actor.ContinueAfter(c, cs[1:])
	}
}

func ms(v any) time.Duration { return time.Duration(v.(int)) * time.Millisecond }

func (g *gsrv) HandleCall(c *actor.Context, req actor.Request) {
	c.SetReceiveTimeout(0)
	switch m := req.Msg.(type) {
	case actor.Atom:
		switch m {
		case "ping":
			c.Reply(req, actor.Atom("pong"))
		case "hold":
			g.held = req
		case "later":
			c.Send(c.Self(), tup{"release", actor.Atom("later")})
			g.held = req
		case "whoami":
			c.Reply(req, c.Self())
		}
	case tup:
		switch m[0] {
		case "echo":
			c.Reply(req, m[1])
		case "stop":
			if len(m) == 3 { // {stop, R, Reply, S}: Terminate, then the reply
				actor.StopReply(c, m[1], req, m[2])
				return
			}
			c.Stop(m[1])
		case "hand_to":
			c.Send(m[1].(actor.Pid), gsReplyFor{req})
		case "hold_notify":
			g.held = req
			c.Send(m[1].(actor.Pid), gsHolding{c.Self()})
		case "arm":
			c.Reply(req, actor.Atom("ok"))
			c.SetReceiveTimeout(ms(m[1]))
		case "cont":
			gate(c, m[1].(actor.Pid))
			c.Reply(req, actor.Atom("ok"))
			actor.ContinueAfter(c, m[2])
		}
	}
}

func (g *gsrv) HandleCast(c *actor.Context, msg any) {
	c.SetReceiveTimeout(0)
	m := msg.(tup)
	switch m[0] {
	case "note":
		g.report(c, "cast", m[1])
	case "stop":
		c.Stop(m[1])
	case "release":
		c.Reply(g.held, m[1]) // false if the call has ended: a late reply is dropped
		g.held = actor.Request{}
	case "cont":
		actor.ContinueAfter(c, m[1])
	case "pokes":
		for i := 0; i < m[1].(int); i++ {
			c.Send(c.Self(), actor.Atom("poke"))
		}
		g.rearm = 0
		if m[3].(bool) {
			g.rearm = ms(m[2])
		}
		c.SetReceiveTimeout(ms(m[2]))
	}
}

func (g *gsrv) HandleInfo(c *actor.Context, msg any) {
	c.SetReceiveTimeout(0)
	if m, ok := msg.(tup); ok && m[0] == "release" {
		c.Reply(g.held, m[1])
		g.held = actor.Request{}
		return
	}
	if m, ok := msg.(tup); ok && m[0] == "cont" {
		actor.ContinueAfter(c, m[1])
		return
	}
	switch m := msg.(type) {
	case actor.ReceiveTimeout:
		g.report(c, "timeout")
	case actor.Exit:
		g.report(c, "info", tup{"'EXIT'", m.From, m.Reason})
	default:
		g.report(c, "info", msg)
		if msg == actor.Atom("poke") && g.rearm > 0 {
			c.SetReceiveTimeout(g.rearm)
		}
	}
}

func (g *gsrv) Terminate(c *actor.Context, r actor.Reason) { g.report(c, "terminate", r) }

// gscen is a running gen_server scenario.
type gscen struct{ *lscen }

// startSrv is start_srv/2: gen_server:start, no link (NoLink).
func (s *gscen) startSrv(name string, o gsrvOpts) actor.Pid {
	return spawnSrv(s.c, s.tracer, name, o)
}

// spawnSrv is start_srv/2 made by c's actor.
func spawnSrv(c *actor.Context, t *tracer, name string, o gsrvOpts) actor.Pid {
	pid, err := actor.SpawnServer(c, &gsrv{t: t, name: name, o: o}, append(o.spawnOpts(), actor.NoLink())...)
	if err != nil {
		panic(err)
	}
	return pid
}

// spawnLinkSrv is start(start_link, Name, Opts, []) made by c's actor,
// which must succeed.
func spawnLinkSrv(c *actor.Context, t *tracer, name string, o gsrvOpts) actor.Pid {
	pid, err := actor.SpawnServer(c, &gsrv{t: t, name: name, o: o}, o.spawnOpts()...)
	if err != nil {
		panic(err)
	}
	return pid
}

// startLinkSrv is start_link_srv/2,3 (timeout 0: none).
func (s *gscen) startLinkSrv(name string, o gsrvOpts, timeout time.Duration) actor.Pid {
	opts := o.spawnOpts()
	if timeout > 0 {
		opts = append(opts, actor.InitTimeout(timeout))
	}
	pid, err := actor.SpawnServer(s.c, &gsrv{t: s.tracer, name: name, o: o}, opts...)
	switch {
	case err == nil:
		s.ev("start", name, "ok")
	case errors.Is(err, actor.ErrIgnore):
		s.ev("start", name, "ignore")
	default:
		s.ev("start", name, err) // a *StartError prints as {error,Reason}
	}
	return pid
}

// awaitGs is await_gs/1.
func (s *gscen) awaitGs(srv actor.Pid) {
	m, _ := s.c.Receive(func(m any) bool { r, ok := m.(gsReport); return ok && r.from == srv }, actor.Infinity)
	w := m.(gsReport).words
	s.ev(append([]any{w[0], srv}, w[1:]...)...)
}

// genCall is gen_call/2,3 (gen_call/2's timeout is 5 s).
func (s *gscen) genCall(srv actor.Pid, req any, timeout time.Duration) {
	v, err := s.c.Call(srv, req, timeout)
	s.ev("gen_call", srv, req, callResult(v, err))
}

// callResult prints a call's result as gen_call/3 does.
func callResult(v any, err error) any {
	var ce *actor.CallExitError
	switch {
	case err == nil:
		return v
	case errors.As(err, &ce): // the server died during the call
		return tup{"exit", ce.Reason}
	case errors.Is(err, actor.ErrTimeout):
		return tup{"exit", "timeout"}
	case errors.Is(err, actor.ErrCallSelf):
		return tup{"exit", "calling_self"}
	case errors.Is(err, actor.ErrNoProc):
		return tup{"exit", "noproc"}
	}
	return "unexpected_error(" + err.Error() + ")"
}

// genCallName is gen_call/2,3 with a registered name: CallName.
func (s *gscen) genCallName(name string, req any, timeout time.Duration) {
	s.ev("gen_call", name, req, nameCallResult(s.c.CallName(name, req, timeout)))
}

// nameCallResult is callResult for a call by name. A name nobody holds
// must fail with an error that is both ErrNoProc (OTP's noproc exit) and
// ErrNotRegistered, as CallName's doc says; one that is ErrNoProc alone
// (and no callee's death) prints as unexpected.
func nameCallResult(v any, err error) any {
	var ce *actor.CallExitError
	if errors.Is(err, actor.ErrNoProc) && !errors.As(err, &ce) && !errors.Is(err, actor.ErrNotRegistered) {
		return "unexpected_error(" + err.Error() + ")"
	}
	return callResult(v, err)
}

// genCastName is gen_cast/2 to a registered name that is held: CastName.
func (s *gscen) genCastName(name string, msg any) {
	s.ev("gen_cast", name, msg, okOrErr(actor.CastName(s.c, name, msg)))
}

// genCastFree is gen_cast/2 to a name nobody holds. gen_server:cast
// returns ok and the message is lost; CastName returns ErrNotRegistered
// and sends nothing (docs/guarantees.md). Either way nothing is delivered,
// which the scenario shows by what the next holder of the name gets; so
// ErrNotRegistered for a free name prints as OTP's ok, and any other
// result (nil included) as itself.
func (s *gscen) genCastFree(name string, msg any) {
	if _, held := s.c.System().Whereis(name); held {
		panic("genCastFree of a held name " + name)
	}
	err := actor.CastName(s.c, name, msg)
	var r any = "nil_for_free_name"
	switch {
	case errors.Is(err, actor.ErrNotRegistered):
		r = "ok"
	case err != nil:
		r = "unexpected_error(" + err.Error() + ")"
	}
	s.ev("gen_cast", name, msg, r)
}

const callTimeout = 5 * time.Second

// stopNormal is the scenarios' closing cast {stop, normal}, its terminate
// and its DOWN.
func (s *gscen) stopNormal(srv actor.Pid) {
	m := s.mon(srv)
	actor.Cast(s.c, srv, tup{"stop", actor.Normal})
	s.awaitGs(srv)
	s.awaitDown(m)
}

// srvLinks prints a server's link set, known to be empty or not by its
// count (Colony exposes only the count): "links <srv> []" or count_N.
func (s *gscen) srvLinks(pid actor.Pid) {
	info, _ := s.c.System().Info(pid)
	l := []any{}
	if info.Links != 0 {
		l = append(l, fmt.Sprintf("count_%d", info.Links))
	}
	s.ev("links", pid, l)
}

// waitUnlinked is the escript's wait_unlinked/1: poll until p has no links.
func (s *gscen) waitUnlinked(p actor.Pid) {
	for s.call(p, func(c *actor.Context) any { i, _ := c.System().Info(c.Self()); return i.Links }).(int) != 0 {
		s.c.Sleep(time.Millisecond)
	}
}

var gsScenarios = map[string]func(s *gscen){
	"stop_from_outside": func(s *gscen) {
		stop := func(srv actor.Pid, r actor.Reason, t time.Duration) {
			// gen_server:stop/3 from main, an actor: Context.StopServer.
			s.ev("stop", srv, r, callResult(actor.Atom("ok"), s.c.StopServer(srv, r, t)))
		}
		a := s.startSrv("a", gsrvOpts{})
		ma := s.mon(a)
		stop(a, boom, 5*time.Second)
		s.awaitGs(a)
		s.awaitDown(ma)
		b := s.startSrv("b", gsrvOpts{trap: true})
		mb := s.mon(b)
		stop(b, actor.Normal, actor.Infinity)
		s.awaitGs(b)
		s.awaitDown(mb)
		c := s.startSrv("c", gsrvOpts{})
		mc := s.mon(c)
		stop(c, actor.ShutdownWith{Reason: actor.Atom("x")}, 5*time.Second)
		s.awaitGs(c)
		s.awaitDown(mc)
		stop(a, actor.Normal, 5*time.Second)
		d := s.startSrv("d", gsrvOpts{})
		md := s.mon(d)
		q := s.spawnLoop("q")
		main := s.c.Self()
		s.cast(q, func(c *actor.Context) { c.Call(d, tup{"cont", main, []any{"c1"}}, 5*time.Second) })
		s.c.Receive(func(m any) bool { h, ok := m.(gsHolding); return ok && h.srv == d }, actor.Infinity)
		stop(d, actor.Normal, 100*time.Millisecond)
		s.c.Send(d, actor.Atom("go"))
		s.awaitGs(d)
		s.awaitGs(d)
		s.awaitDown(md)
		s.mailbox()
	},
	"stop_reply_order": func(s *gscen) {
		terminatedFirst := func(srv actor.Pid) {
			m, err := s.c.Receive(func(m any) bool {
				r, ok := m.(gsReport)
				return ok && r.from == srv && r.words[0] == "terminate"
			}, 0)
			if err != nil {
				s.ev("reply_before_terminate", srv)
				return
			}
			s.ev("terminated_before_reply", srv, m.(gsReport).words[1])
		}
		a := s.startSrv("a", gsrvOpts{})
		ma := s.mon(a)
		s.genCall(a, tup{"stop", actor.Normal, actor.Atom("bye")}, callTimeout)
		terminatedFirst(a)
		s.awaitDown(ma)
		b := s.startSrv("b", gsrvOpts{trap: true})
		mb := s.mon(b)
		s.genCall(b, tup{"stop", boom, actor.Atom("bye")}, callTimeout)
		terminatedFirst(b)
		s.awaitDown(mb)
		s.mailbox()
	},
	"call_reply": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		m := s.mon(srv)
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		s.genCall(srv, tup{"echo", tup{"a", []any{1, 2}}}, callTimeout)
		s.genCall(srv, tup{"echo", actor.Atom("hello")}, callTimeout)
		actor.Cast(s.c, srv, tup{"stop", actor.Normal})
		s.awaitGs(srv)
		s.awaitDown(m)
		s.mailbox()
	},
	"cast_info_order": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		actor.Cast(s.c, srv, tup{"note", 1})
		s.c.Send(srv, actor.Atom("hello"))
		actor.Cast(s.c, srv, tup{"note", 2})
		s.c.Send(srv, tup{"plain", 3})
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		for i := 0; i < 4; i++ {
			s.awaitGs(srv)
		}
		s.stopNormal(srv)
		s.mailbox()
	},
	"call_noproc": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		s.stopNormal(srv)
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		s.genCall(srv, actor.Atom("ping"), actor.Infinity)
		res := "ok"
		if err := actor.Cast(s.c, srv, tup{"note", "x"}); err != nil {
			res = err.Error()
		}
		s.ev("gen_cast", srv, res)
		s.mailbox()
	},
	"call_server_stops": func(s *gscen) {
		for _, tc := range []struct {
			name string
			r    actor.Reason
		}{{"a", boom}, {"b", actor.Normal}, {"c", actor.ShutdownWith{Reason: actor.Atom("x")}}} {
			srv := s.startSrv(tc.name, gsrvOpts{})
			m := s.mon(srv)
			s.genCall(srv, tup{"stop", tc.r}, callTimeout)
			s.awaitGs(srv)
			s.awaitDown(m)
		}
		s.mailbox()
	},
	"call_linked_stops": func(s *gscen) {
		s.c.TrapExit(true)
		for _, tc := range []struct {
			name string
			o    gsrvOpts
			r    actor.Reason
		}{{"a", gsrvOpts{}, boom}, {"b", gsrvOpts{trap: true}, actor.Normal}} {
			srv := s.startLinkSrv(tc.name, tc.o, 0)
			s.genCall(srv, tup{"stop", tc.r}, callTimeout)
			s.exitNow(srv)
			s.awaitGs(srv)
		}
		s.mailbox()
	},
	"parent_exit_held_call": func(s *gscen) {
		s.c.TrapExit(true)
		main := s.c.Self()
		k := s.spawnLoop("k")
		// heldCall is held_call/2: k calls srv with a request the server
		// holds and sends main the result; main waits until it is held.
		heldCall := func(srv actor.Pid) {
			s.cast(k, func(c *actor.Context) {
				v, err := c.Call(srv, tup{"hold_notify", main}, 5*time.Second)
				c.Send(main, gsResult{k, callResult(v, err)})
			})
			_, err := s.c.Receive(func(m any) bool { h, ok := m.(gsHolding); return ok && h.srv == srv }, actor.Infinity)
			must(err)
		}
		awaitResult := func() {
			m, err := s.c.Receive(func(m any) bool { r, ok := m.(gsResult); return ok && r.from == k }, actor.Infinity)
			must(err)
			s.ev("gen_call", k, m.(gsResult).r)
		}
		a := s.startLinkSrv("a", gsrvOpts{trap: true}, 0)
		heldCall(a)
		must(s.c.Exit(a, actor.Shutdown))
		s.awaitGs(a)
		awaitResult()
		s.awaitExit(a)
		b := s.startLinkSrv("b", gsrvOpts{}, 0)
		heldCall(b)
		must(s.c.Exit(b, actor.Shutdown))
		awaitResult()
		s.awaitExit(b)
		s.mailbox()
	},
	"call_server_killed": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		m := s.mon(srv)
		k := s.spawnNamed("k", actor.ActorFunc(func(c *actor.Context, msg any) {
			if h, ok := msg.(gsHolding); ok {
				c.Exit(h.srv, actor.Kill)
			}
		}))
		s.genCall(srv, tup{"hold_notify", k}, callTimeout)
		s.awaitDown(m)
		s.mailbox()
	},
	"reply_later": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		main := s.c.Self()
		r := s.spawnNamed("r", actor.ActorFunc(func(c *actor.Context, msg any) {
			if rf, ok := msg.(gsReplyFor); ok {
				ok := c.Reply(rf.req, tup{"from", c.Self()})
				c.Send(main, gsReplied{ok})
			}
		}))
		s.genCall(srv, tup{"hand_to", r}, callTimeout)
		m, _ := s.c.Receive(func(m any) bool { _, ok := m.(gsReplied); return ok }, actor.Infinity)
		// gen_server:reply/2 returns ok; Colony's Reply says whether the
		// caller took the reply.
		res := "ok"
		if !m.(gsReplied).ok {
			res = "not_taken"
		}
		s.ev("reply", r, res)
		s.genCall(srv, actor.Atom("later"), callTimeout)
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		s.stopNormal(srv)
		s.mailbox()
	},
	"call_timeout_late_reply": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		s.genCall(srv, actor.Atom("hold"), 50*time.Millisecond)
		actor.Cast(s.c, srv, tup{"release", actor.Atom("late")})
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		s.mailbox()
		s.stopNormal(srv)
		s.mailbox()
	},
	"stop_reasons": func(s *gscen) {
		a := s.startSrv("a", gsrvOpts{})
		p := s.spawnLoop("p")
		s.link(p, a)
		ma := s.mon(a)
		s.genCall(a, tup{"stop", actor.Normal, actor.Atom("bye")}, callTimeout)
		s.awaitGs(a)
		s.awaitDown(ma)
		s.waitUnlinked(p)
		s.alive(p)
		b := s.startSrv("b", gsrvOpts{})
		q := s.spawnLoop("q")
		s.link(q, b)
		mb, mq := s.mon(b), s.mon(q)
		s.genCall(b, tup{"stop", boom, actor.Atom("bye")}, callTimeout)
		s.awaitGs(b)
		s.awaitDown(mb)
		s.awaitDown(mq)
		c := s.startSrv("c", gsrvOpts{})
		r := s.spawnLoop("r")
		s.link(r, c)
		mc, mr := s.mon(c), s.mon(r)
		actor.Cast(s.c, c, tup{"stop", actor.ShutdownWith{Reason: actor.Atom("x")}})
		s.awaitGs(c)
		s.awaitDown(mc)
		s.awaitDown(mr)
		s.mailbox()
	},
	"parent_exit": func(s *gscen) {
		s.c.TrapExit(true)
		a := s.startLinkSrv("a", gsrvOpts{trap: true}, 0)
		ma := s.mon(a)
		s.c.Exit(a, actor.Shutdown)
		s.awaitGs(a)
		s.awaitDown(ma)
		s.awaitExit(a)
		b := s.startLinkSrv("b", gsrvOpts{}, 0)
		mb := s.mon(b)
		s.c.Exit(b, actor.Shutdown)
		s.awaitDown(mb)
		s.awaitExit(b)
		c := s.startLinkSrv("c", gsrvOpts{trap: true}, 0)
		k := s.spawnLoop("k")
		s.call(k, func(cx *actor.Context) any { return cx.Exit(c, boom) })
		s.awaitGs(c)
		s.genCall(c, actor.Atom("ping"), callTimeout)
		mc := s.mon(c)
		s.c.Exit(c, actor.ShutdownWith{Reason: actor.Atom("x")})
		s.awaitGs(c)
		s.awaitDown(mc)
		s.awaitExit(c)
		s.mailbox()
	},
	"init_results": func(s *gscen) {
		s.c.TrapExit(true)
		s.startLinkSrv("a", gsrvOpts{init: "stop", stopReason: boom}, 0)
		s.awaitExit(s.pid("a"))
		s.startLinkSrv("b", gsrvOpts{init: "ignore"}, 0)
		s.awaitExit(s.pid("b"))
		s.startLinkSrv("c", gsrvOpts{init: "block"}, 50*time.Millisecond)
		d := s.startLinkSrv("d", gsrvOpts{}, 0)
		s.genCall(d, actor.Atom("ping"), callTimeout)
		s.mailbox()
	},
	"call_name": func(s *gscen) {
		srv := s.startSrv("s1", gsrvOpts{reg: "srv"})
		s.genCallName("srv", actor.Atom("ping"), callTimeout)
		s.genCallName("srv", actor.Atom("whoami"), callTimeout)
		s.genCastName("srv", tup{"note", 1})
		s.ev("send", "srv", okOrErr(s.c.SendName("srv", actor.Atom("hello"))))
		s.genCallName("srv", tup{"echo", actor.Atom("x")}, callTimeout)
		s.awaitGs(srv)
		s.awaitGs(srv)
		a := s.spawnLoop("a")
		s.ev("call", a, s.call(a, func(c *actor.Context) any {
			return nameCallResult(c.CallName("srv", actor.Atom("whoami"), callTimeout))
		}))
		s.ev("call", a, s.call(a, func(c *actor.Context) any {
			must(c.Register("me"))
			return nameCallResult(c.CallName("me", actor.Atom("ping"), callTimeout))
		}))
		m := s.mon(srv)
		s.genCastName("srv", tup{"stop", actor.Normal})
		s.awaitGs(srv)
		s.awaitDown(m)
		s.mailbox()
	},
	"name_free": func(s *gscen) {
		s.genCallName("nobody", actor.Atom("ping"), callTimeout)
		s.genCallName("nobody", actor.Atom("ping"), actor.Infinity)
		s.genCastFree("nobody", tup{"note", actor.Atom("lost")})
		s1 := s.startSrv("s1", gsrvOpts{reg: "srv"})
		m := s.mon(s1)
		s.genCastName("srv", tup{"stop", actor.Normal})
		s.awaitGs(s1)
		s.awaitDown(m)
		s.genCallName("srv", actor.Atom("ping"), callTimeout)
		s.genCastFree("srv", tup{"note", actor.Atom("lost")})
		s2 := s.startSrv("s2", gsrvOpts{reg: "srv"})
		s.genCastName("srv", tup{"note", actor.Atom("found")})
		s.awaitGs(s2)
		s.genCallName("srv", actor.Atom("whoami"), callTimeout)
		s.mailbox()
	},
	"name_moves": func(s *gscen) {
		s.c.TrapExit(true)
		s1 := s.startLinkSrv("s1", gsrvOpts{reg: "srv"}, 0)
		s.genCallName("srv", actor.Atom("whoami"), callTimeout)
		s.genCastName("srv", tup{"stop", boom})
		s.awaitGs(s1)
		s.awaitExit(s1)
		s.genCallName("srv", actor.Atom("whoami"), callTimeout)
		s2 := s.startLinkSrv("s2", gsrvOpts{reg: "srv"}, 0)
		s.genCallName("srv", actor.Atom("whoami"), callTimeout)
		s.genCall(s1, actor.Atom("whoami"), callTimeout)
		s.genCastName("srv", tup{"stop", actor.Normal})
		s.awaitGs(s2)
		s.awaitExit(s2)
		s.mailbox()
	},
	"name_holder_dies": func(s *gscen) {
		main := s.c.Self()
		s1 := s.startSrv("s1", gsrvOpts{reg: "srv"})
		m1 := s.mon(s1)
		k := s.spawnNamed("k", actor.ActorFunc(func(c *actor.Context, msg any) {
			h, ok := msg.(gsHolding)
			if !ok {
				return
			}
			mk, err := c.Monitor(h.srv)
			must(err)
			c.Exit(h.srv, actor.Kill)
			_, err = c.Receive(func(m any) bool { d, ok := m.(actor.Down); return ok && d.Ref == mk }, actor.Infinity)
			must(err)
			spawnSrv(c, s.tracer, "s2", gsrvOpts{reg: "srv"})
			c.Send(main, gsRestarted{c.Self()})
		}))
		s.genCallName("srv", tup{"hold_notify", k}, callTimeout)
		s.awaitDown(m1)
		_, err := s.c.Receive(func(m any) bool { r, ok := m.(gsRestarted); return ok && r.by == k }, actor.Infinity)
		must(err)
		s.genCallName("srv", actor.Atom("whoami"), callTimeout)
		s2 := s.pid("s2")
		m2 := s.mon(s2)
		s.genCallName("srv", tup{"stop", boom}, callTimeout)
		s.awaitGs(s2)
		s.awaitDown(m2)
		s.mailbox()
	},
	"continue_order": func(s *gscen) {
		q := s.spawnNamed("q", actor.ActorFunc(func(c *actor.Context, msg any) {
			if h, ok := msg.(gsHolding); ok {
				must(actor.CastName(c, "srv", tup{"note", 1}))
				must(c.SendName("srv", actor.Atom("hello")))
				must(actor.CastName(c, "srv", tup{"note", 2}))
				c.Send(h.srv, actor.Atom("go"))
			}
		}))
		s1 := s.startSrv("s1", gsrvOpts{reg: "srv", gate: q, cont: []any{actor.Atom("x"), actor.Atom("z")}})
		for i := 0; i < 5; i++ {
			s.awaitGs(s1)
		}
		r := s.spawnNamed("r", actor.ActorFunc(func(c *actor.Context, msg any) {
			if h, ok := msg.(gsHolding); ok {
				must(actor.Cast(c, h.srv, tup{"note", 3}))
				c.Send(h.srv, actor.Atom("go"))
			}
		}))
		s.genCall(s1, tup{"cont", r, []any{actor.Atom("y"), actor.Atom("z")}}, callTimeout)
		for i := 0; i < 3; i++ {
			s.awaitGs(s1)
		}
		s.stopNormal(s1)
		s.mailbox()
	},
	"continue_stop": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		actor.Cast(s.c, srv, tup{"cont", []any{actor.Atom("a"), actor.Atom("b")}})
		s.c.Send(srv, tup{"cont", []any{actor.Atom("c")}})
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		for i := 0; i < 3; i++ {
			s.awaitGs(srv)
		}
		m := s.mon(srv)
		actor.Cast(s.c, srv, tup{"cont", []any{actor.Atom("d"), tup{"stop", boom}}})
		actor.Cast(s.c, srv, tup{"note", 9})
		s.c.Send(srv, actor.Atom("hello"))
		for i := 0; i < 3; i++ {
			s.awaitGs(srv)
		}
		s.awaitDown(m)
		s.mailbox()
	},
	"start_nolink": func(s *gscen) {
		a := s.spawnLoop("a")
		s1 := s.call(a, func(c *actor.Context) any { return spawnSrv(c, s.tracer, "s1", gsrvOpts{trap: true}) }).(actor.Pid)
		s2 := s.call(a, func(c *actor.Context) any { return spawnSrv(c, s.tracer, "s2", gsrvOpts{}) }).(actor.Pid)
		s.srvLinks(s1)
		s.srvLinks(s2)
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		s.genCall(s1, actor.Atom("ping"), callTimeout)
		s.genCall(s2, actor.Atom("ping"), callTimeout)
		b := s.spawnLoop("b")
		s3 := s.call(b, func(c *actor.Context) any { return spawnLinkSrv(c, s.tracer, "s3", gsrvOpts{trap: true}) }).(actor.Pid)
		s4 := s.call(b, func(c *actor.Context) any { return spawnLinkSrv(c, s.tracer, "s4", gsrvOpts{}) }).(actor.Pid)
		m3, m4, mb := s.mon(s3), s.mon(s4), s.mon(b)
		s.die(b, boom)
		s.awaitDown(mb)
		s.awaitGs(s3)
		s.awaitDown(m3)
		s.awaitDown(m4)
		s.genCall(s3, actor.Atom("ping"), callTimeout)
		s.stopNormal(s1)
		s.stopNormal(s2)
		s.mailbox()
	},
	"timeout_rearm": func(s *gscen) {
		srv := s.startSrv("srv", gsrvOpts{})
		actor.Cast(s.c, srv, tup{"pokes", 3, 50, true})
		for i := 0; i < 4; i++ {
			s.awaitGs(srv)
		}
		s.genCall(srv, tup{"arm", 50}, callTimeout)
		s.awaitGs(srv)
		actor.Cast(s.c, srv, tup{"pokes", 2, 50, false})
		for i := 0; i < 2; i++ {
			s.awaitGs(srv)
		}
		s.c.Sleep(150 * time.Millisecond) // three periods: shows the timeout never fires
		s.genCall(srv, actor.Atom("ping"), callTimeout)
		s.mailbox()
		s.stopNormal(srv)
		s.mailbox()
	},
}

func TestGenServerDiff(t *testing.T) {
	runGroup(t, "gen_server", gsScenarios, func(t *testing.T, body func(*gscen)) []string {
		return runLinks(t, func(ls *lscen) { body(&gscen{ls}) })
	})
}

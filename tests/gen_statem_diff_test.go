package tests

// The Go side of the gen_statem scenarios in testdata/erlang/gen_statem:
// each subtest runs the escript live (erldiff.Run), runs the same scenario
// on Colony's statem package, and compares the traces. smMachine mirrors
// the escript's machine (testdata/erlang/colony_statem.hrl) directive for
// directive; as there, only main prints: the machine reports what its
// callbacks see to main (smReport) and main prints each report with
// awaitSm.

import (
	"errors"
	"fmt"
	"time"

	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/statem"
	"github.com/colonyrt/colony/supervisor"
)

type (
	smReport struct {
		name  string
		words []any
	}
	smCallResult struct { // {call_result, Sm, Label, R}
		sm    actor.Pid
		label any
		r     any
	}
)

// smOpts are the machine options of colony_statem.hrl.
type smOpts struct {
	init           string
	initActions    []any
	enter          []any // nil: no enter calls
	functions      bool  // mode => state_functions
	trap           bool
	blockTerminate bool
}

// smMachine mirrors the escript's machine in handle_event_function mode;
// smEnterMachine adds its enter calls (state_enter).
type smMachine struct {
	t    *tracer
	name string
	o    smOpts
	held []actor.Request
}

type smEnterMachine struct{ *smMachine }

func (m smEnterMachine) Enter(c *statem.Context[string], old, st string) { m.enterCall(c, old, st) }

// smFuncs is the machine in state_functions mode: a handler per state.
type smFuncs struct{ *smMachine }

func (m smFuncs) States() map[string]statem.State[string] {
	sts := map[string]statem.State[string]{}
	for _, name := range []string{"a", "b", "c", "d"} {
		st := statem.State[string]{Handle: func(c *statem.Context[string], ev statem.Event) { m.HandleEvent(c, name, ev) }}
		if m.o.enter != nil {
			st.Enter = func(c *statem.Context[string], old string) { m.enterCall(c, old, name) }
		}
		sts[name] = st
	}
	return sts
}

// newSm is the machine the options ask for.
func newSm(t *tracer, name string, o smOpts) statem.Machine[string] {
	m := &smMachine{t: t, name: name, o: o}
	switch {
	case o.functions:
		return statem.Functions[string](smFuncs{m})
	case o.enter != nil:
		return smEnterMachine{m}
	}
	return m
}

func (m *smMachine) report(c *statem.Context[string], words ...any) {
	c.Send(m.t.main, smReport{m.name, words})
}

func (m *smMachine) Init(c *statem.Context[string]) (string, error) {
	m.t.name(c.Self(), m.name)
	if m.o.trap {
		c.TrapExit(true)
	}
	st := m.o.init
	if st == "" {
		st = "a"
	}
	m.report(c, "init", st)
	m.fold(c, m.o.initActions, st, statem.Event{})
	return st, nil
}

func (m *smMachine) enterCall(c *statem.Context[string], old, st string) {
	m.report(c, "enter", old, st)
	m.fold(c, m.o.enter, st, statem.Event{})
}

func (m *smMachine) HandleEvent(c *statem.Context[string], st string, ev statem.Event) {
	label, dirs := smContent(ev.Msg)
	m.report(c, "event", st, smType(ev), label)
	m.fold(c, dirs, st, ev)
}

func (m *smMachine) Terminate(c *statem.Context[string], r actor.Reason, st string) {
	if m.o.blockTerminate {
		c.Receive(func(m any) bool { return m == actor.Atom("release") }, actor.Infinity)
	}
	m.report(c, "terminate", smReason(r), st)
}

// smContent splits an event's content into its label and directives.
func smContent(msg any) (any, []any) {
	if t, ok := msg.(tup); ok && len(t) == 2 {
		if ds, ok := t[1].([]any); ok {
			return t[0], ds
		}
	}
	return msg, nil
}

func smType(ev statem.Event) any {
	if ev.Type == statem.GenericTimeout {
		return tup{"timeout", ev.Name}
	}
	return ev.Type.String()
}

// fold is fold/4 and result/1: the directives, in order, as verbs on c. A
// stop is applied last, as result/1 gives {stop, ...} whatever transition
// the directives set.
func (m *smMachine) fold(c *statem.Context[string], dirs []any, st string, ev statem.Event) {
	var stop actor.Reason
	var walk func(dirs []any)
	walk = func(dirs []any) {
		for _, d := range dirs {
			switch d {
			case "keep":
				c.KeepState()
				continue
			case "repeat":
				c.RepeatState()
				continue
			case "postpone":
				c.Postpone()
				continue
			case "hold":
				m.held = append(m.held, ev.Req)
				continue
			case "crash":
				panic(tup{"crashed", boom})
			}
			t := d.(tup)
			switch t[0] {
			case "in":
				if t[1] == st {
					walk(t[2].([]any))
				}
			case "next":
				c.NextState(t[1].(string))
			case "stop":
				stop = t[1]
			case "ne":
				types := map[string]statem.EventType{"internal": statem.Internal, "cast": statem.Cast, "info": statem.Info}
				c.NextEvent(types[t[1].(string)], t[2])
			case "reply":
				c.Reply(ev.Req, t[1])
			case "reply_held":
				for _, h := range m.held {
					c.Reply(h, t[1])
				}
				m.held = nil
			case "timeout":
				c.EventTimeout(smTime(t[1]), t[2])
			case "state_timeout":
				c.StateTimeout(smTime(t[1]), t[2])
			case "gt":
				c.StartTimeout(statem.NamedTimer(t[1].(string)), smTime(t[2]), t[3])
			case "update":
				c.UpdateTimeout(smTimer(t[1]), t[2])
			case "cancel":
				c.CancelTimeout(smTimer(t[1]))
			default:
				panic(fmt.Sprintf("unknown directive %v", d))
			}
		}
	}
	walk(dirs)
	if stop != nil {
		c.Stop(stop)
	}
}

func smTime(v any) time.Duration {
	if v == "infinity" {
		return actor.Infinity
	}
	return ms(v)
}

func smTimer(k any) statem.Timer {
	switch k {
	case "timeout":
		return statem.EventTimer
	case "state_timeout":
		return statem.StateTimer
	}
	return statem.NamedTimer(k.(tup)[1].(string))
}

// smReason is reason/1: a crash prints as the panic's value, an
// *statem.EnterError as OTP's reason.
func smReason(r any) any {
	var ee *statem.EnterError
	if p, ok := r.(actor.Panic); ok {
		return p.Value
	}
	if err, ok := r.(error); ok && errors.As(err, &ee) {
		switch ee.Action {
		case "next_state":
			return "bad_state_enter_return_from_state_function"
		case "next_event":
			return tup{"bad_state_enter_action_from_state_function", tup{"next_event", ee.Event.Type.String(), ee.Event.Msg}}
		}
		return tup{"bad_state_enter_action_from_state_function", ee.Action}
	}
	return r
}

// smCallRes prints a call's result as sm_call/3 does.
func smCallRes(v any, err error) any {
	var ce *actor.CallExitError
	switch {
	case err == nil:
		return v
	case errors.As(err, &ce):
		return tup{"exit", smReason(ce.Reason)}
	case errors.Is(err, actor.ErrTimeout):
		return tup{"exit", "timeout"}
	case errors.Is(err, actor.ErrNoProc):
		return tup{"exit", "noproc"}
	}
	return "unexpected_error(" + err.Error() + ")"
}

// smScen is a running gen_statem scenario.
type smScen struct{ *lscen }

// startSm is start_sm/2: gen_statem:start, no link; prints the init report.
func (s *smScen) startSm(name string, o smOpts) actor.Pid {
	pid, err := statem.Spawn(s.c, newSm(s.tracer, name, o), actor.NoLink())
	if err != nil {
		panic(err)
	}
	s.awaitSm(name)
	return pid
}

// awaitSm is await_sm/1,2.
func (s *smScen) awaitSm(name string, n ...int) {
	count := 1
	if len(n) > 0 {
		count = n[0]
	}
	for range count {
		m, _ := s.c.Receive(func(m any) bool { r, ok := m.(smReport); return ok && r.name == name }, actor.Infinity)
		w := m.(smReport).words
		s.ev(append([]any{w[0], name}, w[1:]...)...)
	}
}

func (s *smScen) awaitSmDown(ref actor.Ref) {
	m, _ := s.c.Receive(func(m any) bool { d, ok := m.(actor.Down); return ok && d.Ref == ref }, actor.Infinity)
	d := m.(actor.Down)
	s.ev("down", ref, d.Pid, smReason(d.Reason))
}

func (s *smScen) smCall(sm actor.Pid, content any, timeout time.Duration) {
	v, err := s.c.Call(sm, content, timeout)
	label, _ := smContent(content)
	s.ev("call", sm, label, smCallRes(v, err))
}

// smCallAsync is sm_call_async/3: process k makes the call and sends main
// the result.
func (s *smScen) smCallAsync(sm actor.Pid, content any, timeout time.Duration) {
	main := s.c.Self()
	label, _ := smContent(content)
	s.spawnNamed("k", initActor(func(c *actor.Context) {
		v, err := c.Call(sm, content, timeout)
		c.Send(main, smCallResult{sm, label, smCallRes(v, err)})
		c.Stop(actor.Normal)
	}))
}

func (s *smScen) awaitCall() {
	m, _ := s.c.Receive(func(m any) bool { _, ok := m.(smCallResult); return ok }, actor.Infinity)
	r := m.(smCallResult)
	s.ev("call", r.sm, r.label, r.r)
}

func (s *smScen) smCast(sm actor.Pid, content any) { must(actor.Cast(s.c, sm, content)) }

func (s *smScen) stopCast(sm actor.Pid) { s.smCast(sm, tup{"stop", []any{tup{"stop", actor.Normal}}}) }

// d builds a content: a label and its directives.
func d(label string, dirs ...any) tup { return tup{label, dirs} }

// in is the directive {in, S, Ds}.
func in(st string, dirs ...any) tup { return tup{"in", st, dirs} }

var smScenarios = map[string]func(s *smScen){
	"postpone_order": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("e1", in("a", "postpone"), in("b", "postpone")))
		s.smCast(sm, d("e2", in("a", "postpone")))
		s.smCast(sm, d("e3", in("a", "postpone"), in("b", "postpone")))
		s.smCast(sm, d("k", "keep"))
		s.smCast(sm, d("r", "repeat"))
		s.smCast(sm, d("go_b", tup{"next", "b"}))
		s.smCast(sm, d("e4", in("b", "postpone")))
		s.smCast(sm, d("go_c", tup{"next", "c"}))
		s.stopCast(sm)
		s.awaitSm("sm", 16)
		s.awaitDown(m)
		s.mailbox()
	},
	"next_event_order": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("p1", in("a", "postpone")))
		s.smCast(sm, d("go",
			tup{"ne", "internal", d("i1", tup{"ne", "internal", "i1a"})},
			tup{"ne", "cast", "i2"},
			tup{"ne", "info", d("i3", in("b", "postpone"))},
			tup{"next", "b"}))
		s.smCast(sm, "m1")
		s.smCast(sm, d("go_c", tup{"next", "c"}, tup{"ne", "internal", "i4"}))
		s.stopCast(sm)
		s.awaitSm("sm", 13)
		s.awaitDown(m)
		s.mailbox()
	},
	"enter_calls": func(s *smScen) {
		sm := s.startSm("sm", smOpts{enter: []any{in("c", tup{"next", "c"}, tup{"state_timeout", 0, "in_c"})}})
		m := s.mon(sm)
		s.awaitSm("sm")
		s.smCast(sm, d("same", tup{"next", "a"}))
		s.smCast(sm, d("k", "keep"))
		s.smCast(sm, d("r", "repeat"))
		s.smCast(sm, d("go_b", tup{"next", "b"}))
		s.smCast(sm, d("go_c", tup{"next", "c"}))
		s.stopCast(sm)
		s.awaitSm("sm", 11)
		s.awaitDown(m)
		s.mailbox()
	},
	"enter_restrictions": func(s *smScen) {
		bad := []any{
			in("b", tup{"reply_held", "held_ok"}, "postpone"),
			in("c", tup{"ne", "internal", "x"}),
			in("d", tup{"next", "a"}),
		}
		for _, tc := range []struct{ name, target string }{{"s1", "b"}, {"s2", "c"}, {"s3", "d"}} {
			sm := s.startSm(tc.name, smOpts{enter: bad})
			m := s.mon(sm)
			s.awaitSm(tc.name)
			s.smCallAsync(sm, d("wait", "hold"), 5*time.Second)
			s.awaitSm(tc.name)
			s.smCast(sm, d("go", tup{"next", tc.target}))
			s.awaitSm(tc.name, 3)
			s.awaitSmDown(m)
			s.awaitCall()
		}
		s.mailbox()
	},
	"event_timeout": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("arm", tup{"timeout", 20, "t1"}))
		s.awaitSm("sm", 2)
		s.smCast(sm, d("arm2", tup{"timeout", 20, "t2"}, tup{"ne", "internal", "i"}))
		s.smCast(sm, d("arm3", tup{"timeout", 10000, "t3"}))
		s.smCast(sm, "m")
		s.smCast(sm, d("arm4", tup{"timeout", 10000, "t4"}, tup{"timeout", 20, "t5"}))
		s.awaitSm("sm", 6)
		s.smCast(sm, d("arm6", tup{"timeout", 20, "t6"}, tup{"timeout", "infinity", "t7"}))
		s.smCast(sm, d("arm8", tup{"timeout", 10000, "t8"}, tup{"ne", "internal", d("p", "postpone")}))
		s.smCast(sm, d("arm9", tup{"timeout", 60, "t9"}))
		s.awaitSm("sm", 5)
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"state_timeout": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("arm", tup{"state_timeout", 50, "st1"}, tup{"ne", "internal", "i1"}, tup{"ne", "internal", d("i2", "repeat")}))
		s.awaitSm("sm", 4)
		s.smCast(sm, d("arm2", tup{"state_timeout", 50, "st2"}, tup{"ne", "internal", d("i3", tup{"next", "b"})}))
		s.smCast(sm, d("arm3", tup{"state_timeout", 10000, "st3"}, tup{"state_timeout", 150, "st4"}))
		s.awaitSm("sm", 4)
		s.smCast(sm, d("go_c", tup{"next", "c"}, tup{"state_timeout", 20, "st5"}))
		s.awaitSm("sm", 2)
		s.smCast(sm, d("arm6", tup{"state_timeout", 10000, "st6"}, tup{"cancel", "state_timeout"}))
		s.smCast(sm, d("arm7", tup{"state_timeout", 40, "st7"}))
		s.awaitSm("sm", 3)
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"generic_timeout": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("arm", tup{"gt", "t1", 50, "m1"}, tup{"gt", "t2", 10000, "m2"},
			tup{"ne", "internal", d("go_b", tup{"next", "b"}, tup{"update", tup{"gt", "t1"}, "m1b"}, tup{"cancel", tup{"gt", "t2"}})}))
		s.awaitSm("sm", 3)
		s.smCast(sm, d("upd2", tup{"update", tup{"gt", "t3"}, "m3"}, tup{"ne", "internal", "i"}))
		s.awaitSm("sm", 3)
		s.smCast(sm, d("two", tup{"gt", "t4", 60, "m4"}, tup{"gt", "t5", 20, "m5"}, tup{"gt", "t4", 120, "m4b"}))
		s.awaitSm("sm", 3)
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"zero_timeout": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("z1", tup{"timeout", 0, "tz1"}))
		s.smCast(sm, "m1")
		s.awaitSm("sm", 3)
		s.smCast(sm, d("z2", tup{"timeout", 0, "tz2"}, tup{"state_timeout", 0, "sz2"}, tup{"ne", "internal", "i"}))
		s.smCast(sm, "m2")
		s.awaitSm("sm", 4)
		s.smCast(sm, d("z3", tup{"gt", "n1", 0, "g1"}, tup{"state_timeout", 0, "s3"}, tup{"timeout", 0, "t3"}))
		s.awaitSm("sm", 3)
		s.smCast(sm, d("p", in("a", "postpone")))
		s.smCast(sm, d("go_b", tup{"next", "b"}, tup{"state_timeout", 0, "sb"}))
		s.smCast(sm, "m3")
		s.awaitSm("sm", 5)
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"reply_from_enter": func(s *smScen) {
		sm := s.startSm("sm", smOpts{enter: []any{in("b", tup{"reply_held", "entered_b"})}})
		m := s.mon(sm)
		s.awaitSm("sm")
		s.smCallAsync(sm, d("wait", "hold"), 5*time.Second)
		s.awaitSm("sm")
		s.smCast(sm, d("go_b", tup{"next", "b"}))
		s.awaitSm("sm", 2)
		s.awaitCall()
		s.smCallAsync(sm, d("later", in("b", "postpone"), in("c", tup{"reply", "in_c"})), 5*time.Second)
		s.awaitSm("sm")
		s.smCast(sm, d("go_c", tup{"next", "c"}))
		s.awaitSm("sm", 3)
		s.awaitCall()
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"stop_and_reply": func(s *smScen) {
		sm := s.startSm("sm", smOpts{blockTerminate: true})
		m := s.mon(sm)
		s.smCall(sm, d("bye", tup{"reply", "bye_reply"}, tup{"stop", actor.Normal}), 2*time.Second)
		s.c.Send(sm, actor.Atom("release"))
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s2 := s.startSm("s2", smOpts{})
		m2 := s.mon(s2)
		s.smCall(s2, d("die", tup{"stop", boom}), 5*time.Second)
		s.awaitSm("s2", 2)
		s.awaitDown(m2)
		bye := actor.ShutdownWith{Reason: actor.Atom("bye")}
		s3 := s.startSm("s3", smOpts{enter: []any{in("b", tup{"reply_held", "from_enter"}, tup{"stop", bye})}})
		m3 := s.mon(s3)
		s.awaitSm("s3")
		s.smCallAsync(s3, d("wait", "hold"), 5*time.Second)
		s.awaitSm("s3")
		s.smCast(s3, d("go_b", tup{"next", "b"}))
		s.awaitSm("s3", 3)
		s.awaitDown(m3)
		s.awaitCall()
		s.mailbox()
	},
	"call_timeout": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCall(sm, d("slow", in("a", "postpone"), in("b", tup{"reply", "late"})), 50*time.Millisecond)
		s.awaitSm("sm")
		s.smCast(sm, d("go_b", tup{"next", "b"}))
		s.awaitSm("sm", 2)
		s.smCall(sm, d("ping", tup{"reply", "pong"}), 5*time.Second)
		s.awaitSm("sm")
		s.mailbox()
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"crash_supervised": func(s *smScen) {
		t := s.tracer
		sup, err := supervisor.StartLink(s.c, supervisor.Spec{
			Strategy: supervisor.OneForOne, Intensity: 1, Period: 5 * time.Second,
			Children: []supervisor.ChildSpec{{ID: "sm", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
				return statem.Spawn(c, newSm(t, "sm", smOpts{trap: true}))
			}}},
		})
		must(err)
		s.c.Unlink(sup)
		s.name(sup, "sup")
		ms := s.mon(sup)
		s.awaitSm("sm")
		sm := s.pid("sm")
		m := s.mon(sm)
		s.smCast(sm, d("boom", tup{"next", "b"}, "crash"))
		s.awaitSm("sm", 2)
		s.awaitSmDown(m)
		s.awaitSm("sm")
		sm2 := s.pid("sm")
		m2 := s.mon(sm2)
		s.smCall(sm2, d("ping", tup{"reply", "pong"}, tup{"next", "b"}), 5*time.Second)
		s.awaitSm("sm")
		must(s.c.Exit(sup, actor.Shutdown))
		s.awaitSm("sm")
		s.awaitDown(m2)
		s.awaitDown(ms)
		s.mailbox()
	},
	"stop_from_outside": func(s *smScen) {
		sm := s.startSm("sm", smOpts{})
		m := s.mon(sm)
		s.smCast(sm, d("go_b", tup{"next", "b"}))
		s.awaitSm("sm")
		s.ev("stop", sm, smCallRes(actor.Atom("ok"), s.c.StopServer(sm, actor.Normal, actor.Infinity)))
		s.awaitSm("sm")
		s.awaitDown(m)
		s2 := s.startSm("s2", smOpts{trap: true})
		m2 := s.mon(s2)
		x := actor.ShutdownWith{Reason: actor.Atom("x")}
		s.ev("stop", s2, smCallRes(actor.Atom("ok"), s.c.StopServer(s2, x, 5*time.Second)))
		s.awaitSm("s2")
		s.awaitDown(m2)
		s.mailbox()
	},
	"init_actions": func(s *smScen) {
		sm := s.startSm("sm", smOpts{enter: []any{}, initActions: []any{
			tup{"timeout", 10000, "t"}, tup{"ne", "internal", "i1"},
			tup{"state_timeout", 0, "z"}, tup{"ne", "internal", "i2"},
		}})
		m := s.mon(sm)
		s.awaitSm("sm", 4)
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
	"functions_mode": func(s *smScen) {
		sm := s.startSm("sm", smOpts{functions: true, enter: []any{in("c", tup{"state_timeout", 20, "in_c"})}})
		m := s.mon(sm)
		s.awaitSm("sm")
		s.smCast(sm, d("e1", in("a", "postpone")))
		s.smCast(sm, d("go_b", tup{"next", "b"}))
		s.smCast(sm, d("go_c", tup{"next", "c"}))
		s.awaitSm("sm", 7)
		s.smCall(sm, d("r", "repeat", tup{"reply", "ok"}), 5*time.Second)
		s.awaitSm("sm", 3)
		s.stopCast(sm)
		s.awaitSm("sm", 2)
		s.awaitDown(m)
		s.mailbox()
	},
}

func TestGenStatemDiff(t *testing.T) {
	runGroup(t, "gen_statem", smScenarios, func(t *testing.T, body func(*smScen)) []string {
		return runLinks(t, func(ls *lscen) { body(&smScen{ls}) })
	})
}
